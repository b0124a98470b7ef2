"""What a seed may be: an integer with 0 <= seed < 2**32.

NumPy's legacy seeding (`np.random.seed`, which RLlib calls with the spec's seed) refuses
anything outside that range, and larger integers overflow C longs in other seeding paths
(`rlp eval --seed 1e23` once ended in "Overflow when unpacking long long", exit 70). One bound
for every seed a user gives, in a spec or on the command line, so a bad one is refused where it
is given, naming it.
"""

SEED_LIMIT = 2**32
"""Seeds are in `range(SEED_LIMIT)`."""
