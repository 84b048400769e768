"""Tables on disk and in memory: the directory of tables (`store`), strategies loaded from it
or solved and saved (`strategies`), the caches in memory (`cache`), and the pod's table
build process with its queue (`build_process`). Builds on `solving` and `kernels`."""
