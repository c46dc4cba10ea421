export PYTHONPATH=/work/wt/review SYMGRAD_CACHE_DIR=/tmp/cache-review JAX_ENABLE_X64=1 JAX_PLATFORMS=cpu
