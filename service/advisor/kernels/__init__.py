"""The advisor's numba kernels and the arrays they run on: a RuleSet compiled to arrays
(`model`), the value kernels of the solver (`values`), the float64 moments (`moments`), the
policy of a block of states (`policy`), a turn in two moments (`turn`), the exact forward
pass of the final score's distribution (`distribution`), win tables and chances
(`winprob`), games of the advisor's play (`selfplay`), the steps several of them take,
written once (`steps`), and the pool the kernels run on (`threads`). Nothing here knows a
strategy, a store or a request: the kernels take plain arrays and the kernel-data tuple."""
