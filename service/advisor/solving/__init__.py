"""Solving a RuleSet: one sheet by backward induction (`solver`: value and moment tables),
the parts a RuleSet is solved as and how (`strategy`, with the `Method` of each way in
`methods/`), and a sheet read as the parts' states (`positions`). Builds on `kernels`."""
