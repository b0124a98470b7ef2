"""Submitting experiment specs as Ray jobs and managing them on a cluster.

Importing this package imports nothing else (`rlp --help` imports it): `client.py` builds the
job client, `submit.py` submits a spec, `follow.py` streams a job's logs, the commands are
`rl_platform/commands/jobs.py`. None imports Ray until it talks to a cluster.
"""
