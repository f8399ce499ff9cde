# Fault suites: the stack under failures an operator meets (a database
# failover, a full disk, hostile connections, a long soak). Each starts its
# own stack through t/e2e/harness.h like the end-to-end suites; a long
# variant of each runs only with BDS_FAULTS_LONG=1 (scripts/test --long).

# -- high availability: a pg_auto_failover formation and a failover under load --
# the stack on scripts/ha's formation, its primary stopped and then killed
# -9 under mixed writes: 503s only, every acknowledged write kept, every
# event delivered, nothing restarted
E2E_SUITES += %reldir%/check_faults_failover

# -- connections: slow clients, idle connections, the saturation soak --
# 1,000 idle connections and a slow-loris crowd through nginx while an
# ordinary client is served; a saturation soak (10 s, 60 with
# BDS_FAULTS_LONG=1): no 5xx, worker memory and open files flat
E2E_SUITES += %reldir%/check_faults_conns

# -- a full documents disk --
# data_dir on a small tmpfs the harness mounts (root): uploads, statements
# and logos written while it is full, then retried with room
E2E_SUITES += %reldir%/check_faults_disk
%canon_reldir%_check_faults_disk_SOURCES = %reldir%/check_faults_disk.c
