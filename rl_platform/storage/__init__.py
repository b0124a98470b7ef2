"""What a run leaves on disk, below orchestration: run folders and their layout, checkpoints
(safetensors + JSON, hashed), an algorithm's state as checkpoint parts, and the league pool's
files (local or object store). Only `algorithm_state` touches an RLlib Algorithm, through its
public `get_state`/`set_state`."""
