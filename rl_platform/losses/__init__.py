"""Pure torch loss terms and diagnostics; keys starting with `loss_` are summed, the rest inform."""
