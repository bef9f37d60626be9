-- conf/example-slurm.lua: boot inside a Slurm allocation (salloc -N4, then lamkit boot this).
-- With no node lines the allocation (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE) is the node
-- list; srun starts every agent in one step unless slurm.oneshot is false.
boot = "slurm"
slurm = { oneshot = true, options = { "--quiet" } }
