"""The off-policy fast path's replay store (no Ray; docs/off_policy.md): `layout` (what one
transition holds, from the spaces, and its bytes), `memory_fit` (whether a store fits the
device), `store` (`ReplayStore`: preallocated tensors, a write cursor, n-step gathers),
`n_step` (the n-step window read at sample time), `sampler` (uniform) and `prioritized` over
`sum_tree` (proportional prioritized replay).
"""
