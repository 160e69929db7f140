# wrapper_init.sh: the start of job.sh, before its helpers and wrapper.sh.
bg_d=${0%/*}
