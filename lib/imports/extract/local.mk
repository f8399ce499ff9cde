# lib/imports/extract/: reading documents (bds-extract) and the field rules.
#
# The document-reading half (MuPDF, Tesseract, Leptonica, libseccomp) is its
# own archive, linked ONLY by app/bds-extract and its tests: no other
# program of the service parses a document or carries those libraries.
noinst_LIBRARIES += lib/libbdsextract.a
lib_libbdsextract_a_CPPFLAGS = $(AM_CPPFLAGS) $(MUPDF_CFLAGS) $(TESS_CFLAGS) $(SECCOMP_CFLAGS)
lib_libbdsextract_a_SOURCES = \
	%reldir%/extract_doc.h \
	%reldir%/extract_doc.c \
	%reldir%/extract_doc_pdf.c \
	%reldir%/extract_doc_ocr.c \
	%reldir%/extract_doc_sandbox.c
BDS_EXTRACT_LIBS = lib/libbdsextract.a lib/libbds.a $(JSONC_LIBS) $(MAGIC_LIBS) \
	$(MUPDF_LIBS) $(TESS_LIBS) $(SECCOMP_LIBS) -lm

# The field rules: pure code (json-c and core/money only), in libbds.a:
# bds-api re-checks a reviewed draft with them.
lib_libbds_a_SOURCES += \
	%reldir%/extract.h \
	%reldir%/extract_fields.h \
	%reldir%/extract_fields.c \
	%reldir%/extract_fields_check.c \
	%reldir%/extract_fields_text.c
