# the biller simulator's self-test (a Python script run with
# Debian's /usr/bin/python3; it finds tools/biller-sim through BDS_SRCDIR).
TESTS += %reldir%/sim.test
EXTRA_DIST += %reldir%/sim.test %reldir%/local.mk \
	tools/biller-sim/biller-sim tools/biller-sim/README.md tools/biller-sim/dev.json
