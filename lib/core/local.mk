# lib/core/: the request path and what every module uses: arena, http, router, dispatch, auth, db, the leased queue.
lib_libbds_a_SOURCES += \
	%reldir%/arena.c \
	%reldir%/arena.h \
	%reldir%/clock.c \
	%reldir%/clock.h \
	%reldir%/auth.c \
	%reldir%/auth.h \
	%reldir%/config.c \
	%reldir%/config.h \
	%reldir%/crypto.c \
	%reldir%/crypto.h \
	%reldir%/cursor.c \
	%reldir%/cursor.h \
	%reldir%/db.c \
	%reldir%/db.h \
	%reldir%/dispatch.c \
	%reldir%/env.c \
	%reldir%/env.h \
	%reldir%/errors.c \
	%reldir%/errors.h \
	%reldir%/files.c \
	%reldir%/files.h \
	%reldir%/health.c \
	%reldir%/health.h \
	%reldir%/http.c \
	%reldir%/http.h \
	%reldir%/idem.c \
	%reldir%/idem.h \
	%reldir%/jobq.c \
	%reldir%/jobq.h \
	%reldir%/json.c \
	%reldir%/nodump.c \
	%reldir%/nodump.h \
	%reldir%/json.h \
	%reldir%/jwt.c \
	%reldir%/jwt.h \
	%reldir%/log.c \
	%reldir%/log.h \
	%reldir%/meter.c \
	%reldir%/meter.h \
	%reldir%/migrate.c \
	%reldir%/migrate.h \
	%reldir%/money.c \
	%reldir%/money.h \
	%reldir%/queue.c \
	%reldir%/queue.h \
	%reldir%/queue_cli.c \
	%reldir%/req.c \
	%reldir%/req.h \
	%reldir%/router.c \
	%reldir%/router.h \
	%reldir%/server.h \
	%reldir%/server_master.c \
	%reldir%/server_reply.c \
	%reldir%/server_reply.h \
	%reldir%/server_worker.c \
	%reldir%/standby.c \
	%reldir%/standby.h \
	%reldir%/sweep.c \
	%reldir%/sweep.h \
	%reldir%/urlsafe.c \
	%reldir%/urlsign.c \
	%reldir%/urlsign.h \
	%reldir%/urlsafe.h \
	%reldir%/vault.c \
	%reldir%/vault.h \
	%reldir%/validate.c \
	%reldir%/validate.h
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/core_module.c
lib_libbds_a_SOURCES += %reldir%/module.c %reldir%/module.h

# The error catalogue: errcodes.txt is the one table of error codes;
# errcodes.awk makes the C header from it at build time (into the build
# tree: Makefile.am puts -I$(top_builddir)/lib first), and the checked-in
# docs page and OpenAPI fragment that t/errcodes.test keeps fresh.
# (BUILT_SOURCES and CLEANFILES name the header in Makefile.am: they are
# set there after this file.)
nodist_lib_libbds_a_SOURCES += %reldir%/errcodes.h
dist_noinst_DATA = %reldir%/errcodes.txt
dist_noinst_SCRIPTS = %reldir%/errcodes.awk
%reldir%/errcodes.h: $(srcdir)/%reldir%/errcodes.txt $(srcdir)/%reldir%/errcodes.awk
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	LC_ALL=C $(AWK) -f $(srcdir)/%reldir%/errcodes.awk -v out=h \
	    $(srcdir)/%reldir%/errcodes.txt > $@.tmp && mv $@.tmp $@
