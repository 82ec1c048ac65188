"""The launcher's variables agree with MPI's view of the job."""
import os
import sys

import ember.distributed as dist

dist.init_process_group()
if "RANK" in os.environ:  # under `ember run`; plain mpiexec leaves them to MPI
    assert int(os.environ["RANK"]) == dist.get_rank()
    assert int(os.environ["WORLD_SIZE"]) == dist.get_world_size()
    assert int(os.environ["LOCAL_RANK"]) == dist.get_rank()
    assert int(os.environ["LOCAL_WORLD_SIZE"]) == dist.get_world_size()
print(f"rank {dist.get_rank()} of {dist.get_world_size()} argv {sys.argv[1:]} iallreduce algorithm "
      f"{os.environ.get('OMPI_MCA_coll_libnbc_iallreduce_algorithm')}")  # as MPI found it at init
if "--fail-on" in sys.argv and dist.get_rank() == int(sys.argv[-1]):
    raise RuntimeError("this rank fails on purpose")
dist.barrier()
dist.destroy_process_group()
