"""The kernel path: ccsim's algorithms as Linux BPF struct_ops programs on a namespace testbed.

- ``bpf/``: one ``<algorithm>.bpf.c`` per ported algorithm and the kernel glue they share
  (``ccsim_cc.h``, ``ccsim_cc_ops.h``); ``native/``: the loader and the delay line, in C.
- ``build``: compiles them for the running kernel (CO-RE against its BTF) into a cache directory.
- ``loader``: registers a program with its parameters for the length of a run.
- ``testbed``: the namespaces, the bottleneck and the delay line; ``traffic``: the flows.
- ``collect``: turns the samples into the run directory's tables.

docs/kernel.md describes the design and its limits. Nothing here is imported by ``import ccsim``.
"""
