# lib/imports/: bill imports: the store and its one status write.
lib_libbds_a_SOURCES += \
	%reldir%/imports.h \
	%reldir%/imports_int.h \
	%reldir%/imports_store.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/imports_module.c
