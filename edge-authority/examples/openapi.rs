//! Prints the authority's OpenAPI document (`src/openapi.rs`, the one
//! source of API v1's shapes) as the committed `edge-authority/openapi.json`
//! holds it, from which the admin page's TypeScript types are generated:
//! `node www/scripts/api-types.mjs` runs this and then openapi-typescript.

fn main() {
    print!("{}", rangeid_authority::openapi::pretty_text());
}
