//! Prints the JSON Schema of the resolved scenario document. Regenerate the checked-in copy with
//! `cargo run -q -p ccsim-core --example resolved_schema > docs/resolved-scenario.schema.json`.

fn main() {
    print!("{}", ccsim_core::scenario::resolved_schema_json());
}
