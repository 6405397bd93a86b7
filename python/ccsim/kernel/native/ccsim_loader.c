// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * ccsim_loader: registers one ccsim BPF congestion-control object under a given name with its
 * parameters, reports the algorithm's metrics, and unregisters it whatever happens to the caller.
 *
 *   ccsim_loader OBJECT NAME [VAR=VALUE]... [-i INTERVAL_MS]   register, sample, unregister
 *   ccsim_loader --list OBJECT                                  print the object's settable globals
 *
 * How the registration cannot outlive us: the struct_ops map is created with BPF_F_LINK and
 * registered through a BPF link (kernel >= 6.4). A link is released when its last file descriptor
 * closes, so the kernel unregisters the algorithm when this process exits for any reason,
 * SIGKILL included. We exit when our standard input reaches end of file (the harness closed the pipe
 * or died), on SIGTERM/SIGINT/SIGHUP, and when the parent dies (PR_SET_PDEATHSIG). Sockets that
 * still use the algorithm keep it alive in the kernel until they close; its name is gone from the
 * list at once. Debian 12's libbpf 1.1 does not know struct_ops links, so the link is created here
 * with bpf_link_create() after libbpf has written the map's value.
 *
 * Output on stdout, one record per line:
 *   registered NAME map_id=N link_id=N
 *   metric_names NAME[/SCALE],...
 *   sample T_NS PORT ACKS RTT_SAMPLES RTT_SUM_US RTT_LAST_US CWND_BYTES V0 V1 ... V7
 *   unregistered NAME
 * T_NS is CLOCK_MONOTONIC, the clock the harness timestamps its own samples with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define NAME_PLACEHOLDER "@ccsim@name@@@@" /* 15 characters and the NUL: see ccsim_cc.h */
#define NAME_BYTES 16
#define MAX_METRICS 16
#ifndef BPF_F_LINK
#define BPF_F_LINK (1U << 13)
#endif
#define ATTACH_STRUCT_OPS 44 /* enum bpf_attach_type BPF_STRUCT_OPS, newer than Debian 12's headers */

struct metrics_value { /* struct cc_metrics in ccsim_cc.h */
	uint64_t acks, rtt_samples, rtt_sum_us, rtt_last_us, cwnd_bytes;
	int64_t vals[MAX_METRICS];
};

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static void die(const char *what) { fprintf(stderr, "ccsim_loader: %s\n", what); exit(1); }

static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf;

	if (!f || fstat(fileno(f), &st) != 0) { fprintf(stderr, "ccsim_loader: %s: %s\n", path, strerror(errno)); exit(1); }
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf || fread(buf, 1, st.st_size, f) != (size_t)st.st_size) die("cannot read the object file");
	fclose(f);
	*size = st.st_size;
	return buf;
}

/* Puts NAME where the object carries the placeholder; exactly one occurrence is expected. */
static void set_ops_name(char *buf, size_t size, const char *name)
{
	char *hit = NULL;

	for (size_t i = 0; i + NAME_BYTES <= size; i++) {
		if (memcmp(buf + i, NAME_PLACEHOLDER, NAME_BYTES) == 0) {
			if (hit) die("the object holds the name placeholder twice");
			hit = buf + i;
		}
	}
	if (!hit) die("the object holds no name placeholder (not built from ccsim_cc_ops.h)");
	memset(hit, 0, NAME_BYTES);
	memcpy(hit, name, strlen(name));
}

static struct bpf_map *find_map(struct bpf_object *obj, int (*match)(const struct bpf_map *))
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		if (match(map))
			return map;
	return NULL;
}

static int is_rodata(const struct bpf_map *m)
{
	const char *n = bpf_map__name(m);
	size_t len = strlen(n);
	return len >= 7 && strcmp(n + len - 7, ".rodata") == 0;
}
static int is_struct_ops(const struct bpf_map *m) { return bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS; }
static int is_metrics(const struct bpf_map *m) { return strcmp(bpf_map__name(m), "ccsim_metrics") == 0; }

/* The .rodata variable NAME: its offset and size, from the object's BTF. */
static int find_var(struct bpf_object *obj, const char *name, uint32_t *offset, uint32_t *size)
{
	const struct btf *btf = bpf_object__btf(obj);
	int sec = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	const struct btf_type *t;
	const struct btf_var_secinfo *vs;

	if (sec < 0)
		return -1;
	t = btf__type_by_id(btf, sec);
	vs = btf_var_secinfos(t);
	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		if (strcmp(btf__name_by_offset(btf, var->name_off), name) == 0) {
			*offset = vs->offset;
			*size = vs->size;
			return 0;
		}
	}
	return -1;
}

static void list_vars(struct bpf_object *obj, const char *rodata)
{
	const struct btf *btf = bpf_object__btf(obj);
	int sec = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	const struct btf_type *t;
	const struct btf_var_secinfo *vs;

	if (sec < 0)
		return;
	t = btf__type_by_id(btf, sec);
	vs = btf_var_secinfos(t);
	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		const char *n = btf__name_by_offset(btf, var->name_off);
		if (vs->size == 4 || vs->size == 8) {
			uint64_t v = 0;
			memcpy(&v, rodata + vs->offset, vs->size);
			printf("var %s %u %llu\n", n, vs->size, (unsigned long long)v);
		} else {
			printf("var %s %u -\n", n, vs->size);
		}
	}
}

static void set_var(struct bpf_object *obj, char *rodata, size_t rodata_size, const char *assignment)
{
	char name[128];
	const char *eq = strchr(assignment, '=');
	uint32_t off, size;
	char *end;
	unsigned long long v;

	if (!eq || (size_t)(eq - assignment) >= sizeof(name)) { fprintf(stderr, "ccsim_loader: bad setting %s (want VAR=VALUE)\n", assignment); exit(2); }
	memcpy(name, assignment, eq - assignment);
	name[eq - assignment] = 0;
	if (find_var(obj, name, &off, &size) != 0 || off + size > rodata_size || (size != 4 && size != 8)) {
		fprintf(stderr, "ccsim_loader: the object has no integer parameter %s\n", name);
		exit(2);
	}
	errno = 0;
	v = strtoull(eq + 1, &end, 0);
	if (errno || *end || end == eq + 1 || (size == 4 && v > 0xffffffffULL)) {
		fprintf(stderr, "ccsim_loader: %s: %s is not an unsigned %u-bit integer\n", name, eq + 1, size * 8);
		exit(2);
	}
	if (size == 4) { uint32_t x = (uint32_t)v; memcpy(rodata + off, &x, 4); }
	else memcpy(rodata + off, &v, 8);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sample(int map_fd)
{
	uint32_t key, next;
	uint32_t *prev = NULL;
	struct metrics_value v;
	uint64_t t = now_ns();

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, &v) != 0)
			continue;
		printf("sample %llu %u %llu %llu %llu %llu %llu", (unsigned long long)t, key,
		       (unsigned long long)v.acks, (unsigned long long)v.rtt_samples, (unsigned long long)v.rtt_sum_us,
		       (unsigned long long)v.rtt_last_us, (unsigned long long)v.cwnd_bytes);
		for (int i = 0; i < MAX_METRICS; i++)
			printf(" %lld", (long long)v.vals[i]);
		printf("\n");
	}
	fflush(stdout);
}

static int valid_name(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= NAME_BYTES)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int list = 0, interval_ms = 100, first = 1;
	const char *path, *name = "ccsim_listing";
	struct bpf_object *obj;
	struct bpf_map *rodata_map, *ops_map, *metrics_map;
	char *buf, *rodata;
	size_t size, rodata_size = 0;
	uint32_t off, vsize;
	struct bpf_map_info info = {};
	struct bpf_link_info linfo = {};
	uint32_t info_len = sizeof(info), linfo_len = sizeof(linfo);
	int link_fd, map_fd;

	if (argc >= 2 && strcmp(argv[1], "--list") == 0) { list = 1; first = 2; }
	if (argc < first + (list ? 1 : 2)) {
		fprintf(stderr, "usage: ccsim_loader OBJECT NAME [VAR=VALUE]... [-i INTERVAL_MS] | ccsim_loader --list OBJECT\n");
		return 2;
	}
	path = argv[first];
	if (!list) {
		name = argv[first + 1];
		if (!valid_name(name)) { fprintf(stderr, "ccsim_loader: name %s: 1-15 characters of a-z, 0-9, _\n", name); return 2; }
	}
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);

	buf = read_file(path, &size);
	set_ops_name(buf, size, name);
	{
		LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "ccsim");
		obj = bpf_object__open_mem(buf, size, &opts);
	}
	if (!obj) die("libbpf cannot open the object");
	rodata_map = find_map(obj, is_rodata);
	ops_map = find_map(obj, is_struct_ops);
	metrics_map = find_map(obj, is_metrics);
	if (!rodata_map || !ops_map || !metrics_map) die("the object lacks .rodata, a struct_ops map or ccsim_metrics");
	rodata = (char *)bpf_map__initial_value(rodata_map, &rodata_size);
	if (!rodata) die("no initial value for .rodata");
	if (list) {
		list_vars(obj, rodata);
		return 0;
	}
	for (int i = first + 2; i < argc; i++) {
		if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
			interval_ms = atoi(argv[++i]);
			if (interval_ms <= 0) die("-i wants a positive number of milliseconds");
			continue;
		}
		set_var(obj, rodata, rodata_size, argv[i]);
	}
	if (bpf_map__set_map_flags(ops_map, bpf_map__map_flags(ops_map) | BPF_F_LINK) != 0)
		die("cannot mark the struct_ops map as a link map");
	if (bpf_object__load(obj) != 0)
		die("the kernel refused the program (verifier log above)");
	/* libbpf 1.1 writes the map value here; with BPF_F_LINK that does not register yet */
	if (!bpf_map__attach_struct_ops(ops_map))
		die("cannot write the struct_ops map");
	map_fd = bpf_map__fd(ops_map);
	link_fd = bpf_link_create(map_fd, 0, ATTACH_STRUCT_OPS, NULL);
	if (link_fd < 0) {
		fprintf(stderr, "ccsim_loader: registering %s failed: %s\n", name, strerror(errno));
		return 1;
	}
	bpf_obj_get_info_by_fd(map_fd, &info, &info_len);
	bpf_obj_get_info_by_fd(link_fd, &linfo, &linfo_len);
	printf("registered %s map_id=%u link_id=%u\n", name, info.id, linfo.id);
	if (find_var(obj, "ccsim_metric_names", &off, &vsize) == 0 && off + vsize <= rodata_size)
		printf("metric_names %.*s\n", (int)vsize, rodata + off);
	fflush(stdout);

	{
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int mfd = bpf_map__fd(metrics_map);
		char junk[256];

		while (!stop_requested) {
			int k = poll(&pfd, 1, interval_ms);
			if (k > 0) {
				ssize_t r = read(STDIN_FILENO, junk, sizeof(junk));
				if (r <= 0)
					break; /* the harness closed the pipe or is gone */
			} else if (k < 0 && errno != EINTR) {
				break;
			}
			sample(mfd);
		}
		sample(mfd);
	}
	close(link_fd); /* unregisters: the link was the only reference holding the registration */
	printf("unregistered %s\n", name);
	fflush(stdout);
	return 0;
}
