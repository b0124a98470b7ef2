"""The built-in model types, one file each (no Ray).

Every public module here declares `MODEL_TYPE`, its `ModelTypeSpec` subclass;
`rl_platform/spec/model.py` imports them all, so adding a type adds one file. Modules whose
name starts with `_` hold what several types share.
"""
