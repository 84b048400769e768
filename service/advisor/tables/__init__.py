"""Tables on disk and in memory: a directory of tables and the chain of them a service looks
in (`store`), a strategy's value tables and a part's moment tables as files (`strategies`),
the one cache every kind of table is kept in (`cache`), and the pod's table build process
with its queue (`build_process`). Builds on `solving` and `kernels`."""
