# The environment cargo-leptos gives its debug builds. Builds and tests run outside cargo-leptos
# with the same variables reuse its artifacts instead of recompiling every crate that reads
# them at compile time (and RUSTFLAGS changes invalidate everything).
# shellcheck shell=bash
export LEPTOS_OUTPUT_NAME=agent-manager LEPTOS_SITE_ROOT=target/site LEPTOS_SITE_PKG_DIR=pkg \
  LEPTOS_SITE_ADDR=127.0.0.1:3000 LEPTOS_RELOAD_PORT=3001 LEPTOS_LIB_DIR=app LEPTOS_BIN_DIR=server \
  LEPTOS_JS_MINIFY=false LEPTOS_HASH_FILES=false
export RUSTFLAGS="--cfg erase_components"
