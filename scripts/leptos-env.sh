# The environment every build of this workspace shares: the variables leptos reads at compile
# time (as cargo-leptos sets them for its debug builds, so `cargo leptos watch` reuses the same
# artifacts too). A build without them recompiles every crate that reads them, and a RUSTFLAGS
# change invalidates everything.
# shellcheck shell=bash
export LEPTOS_OUTPUT_NAME=agent-manager LEPTOS_SITE_ROOT=target/site LEPTOS_SITE_PKG_DIR=pkg \
  LEPTOS_SITE_ADDR=127.0.0.1:3000 LEPTOS_RELOAD_PORT=3001 LEPTOS_LIB_DIR=app LEPTOS_BIN_DIR=server \
  LEPTOS_JS_MINIFY=false LEPTOS_HASH_FILES=false
export RUSTFLAGS="--cfg erase_components"
