/*
 * Bill field rules (extract.h): a document's lines to the review draft.
 *
 * The lines are cleaned and joined into rows (lines of a page that share
 * a baseline), each row's words are matched against one table of labels,
 * and each label looks for its value after it in the row, in the row
 * below (a table's header over its values) or above (a big amount over
 * its caption). Candidates of a field vote: the same value under several
 * labels or pages (a summary and a payment stub) raises the confidence,
 * a different value under an equally strong label lowers it. Then the
 * arithmetic checks (extract_fields_check.c) run on the draft.
 *
 * Pure: no I/O, no global state; every loop is bounded by the caps below,
 * whatever the document holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/money.h"
#include "imports/extract/extract.h"
#include "imports/extract/extract_fields.h"

#define XF_LINES_MAX	3000	/* lines read; a bill has far fewer */
#define XF_SEGS_MAX	12	/* lines joined into one row */
#define XF_WORDS_MAX	40	/* words of a row matched against labels */
#define XF_HITS_MAX	8	/* labels found in one row */
#define XF_WORD_LEN	24
#define XF_CANDS_MAX	48	/* candidates of one field */
#define XF_ITEMS_MAX	60	/* line items */
#define XF_ADDR_MAX	6	/* lines of a remit-to address */

/* What a label announces. */
enum cls {
	C_TOTAL, C_PREV, C_PAY, C_CHARGES, C_ADJ, C_SUBTOTAL, C_ACCOUNT, C_BILLNO,
	C_REF, C_DUE, C_STMT, C_PERIOD, C_REMIT, C_PAYABLE, C_PAYURL, C_ITEMS,
	C_TRAP, C__MAX
};

struct label {
	enum cls	 cls;
	float		 strength;
	const char	*words;		/* lower case, single spaces */
};

/*
 * The label vocabulary. At each word the longest label matching wins, so a
 * longer phrase ("previous amount due", "minimum amount due") keeps its
 * words from a shorter one ("amount due"). C_TRAP labels announce amounts
 * that are none of the fields: they exist to take those words away.
 */
static const struct label labels[] = {
	/* total amount due */
	{ C_TOTAL, 1.00, "total amount due" }, { C_TOTAL, 0.95, "amount due" },
	{ C_TOTAL, 0.95, "total due" }, { C_TOTAL, 1.00, "total balance due" },
	{ C_TOTAL, 0.90, "balance due" }, { C_TOTAL, 0.95, "new balance due" },
	{ C_TOTAL, 0.95, "total amount payable" }, { C_TOTAL, 0.90, "amount payable" },
	{ C_TOTAL, 0.90, "total payable" }, { C_TOTAL, 0.95, "please pay" },
	{ C_TOTAL, 1.00, "please pay this amount" }, { C_TOTAL, 0.95, "pay this amount" },
	{ C_TOTAL, 0.90, "amount to pay" }, { C_TOTAL, 0.90, "total to pay" },
	{ C_TOTAL, 0.90, "amount to be paid" }, { C_TOTAL, 0.95, "total now due" },
	{ C_TOTAL, 0.95, "amount now due" }, { C_TOTAL, 0.85, "new balance" },
	{ C_TOTAL, 0.90, "total amount owing" }, { C_TOTAL, 0.90, "amount owing" },
	{ C_TOTAL, 0.90, "total owing" }, { C_TOTAL, 0.85, "balance owing" },
	{ C_TOTAL, 0.80, "total outstanding" }, { C_TOTAL, 0.60, "total amount" },
	{ C_TOTAL, 0.70, "total balance" }, { C_TOTAL, 0.65, "current balance" },
	{ C_TOTAL, 0.55, "account balance" }, { C_TOTAL, 0.40, "balance" },
	{ C_TOTAL, 0.45, "total" }, { C_TOTAL, 0.90, "amount due now" },
	{ C_TOTAL, 0.95, "zu zahlender betrag" }, { C_TOTAL, 0.90, "zahlbetrag" },
	{ C_TOTAL, 0.85, "rechnungsbetrag" }, { C_TOTAL, 0.80, "gesamtbetrag" },
	{ C_TOTAL, 0.90, "zu zahlen" }, { C_TOTAL, 0.95, "montant \xc3\xa0 payer" },
	{ C_TOTAL, 0.95, "montant a payer" }, { C_TOTAL, 0.95, "total \xc3\xa0 payer" },
	{ C_TOTAL, 0.95, "net \xc3\xa0 payer" }, { C_TOTAL, 0.90, "montant d\xc3\xbb" },
	{ C_TOTAL, 0.70, "montant total" }, { C_TOTAL, 0.80, "importe total" },
	{ C_TOTAL, 0.95, "total a pagar" }, { C_TOTAL, 0.95, "importe a pagar" },
	{ C_TOTAL, 0.95, "totale da pagare" }, { C_TOTAL, 0.95, "importo da pagare" },
	{ C_TOTAL, 1.00, "total amount to pay" }, { C_TOTAL, 0.95, "what you owe" },
	{ C_TOTAL, 0.95, "what you owe now" }, { C_TOTAL, 0.90, "amount to pay now" },
	{ C_TOTAL, 0.95, "patient balance due" }, { C_TOTAL, 0.90, "balance due from patient" }, { C_TOTAL, 0.80, "statement balance" },
	{ C_TOTAL, 0.80, "bill total" }, { C_TOTAL, 0.75, "total bill" }, { C_TOTAL, 0.85, "please remit" }, { C_TOTAL, 0.85, "invoice total" },
	{ C_TOTAL, 0.90, "amount owed" }, { C_TOTAL, 0.90, "total amount owed" },
	{ C_TOTAL, 0.90, "total to be paid" }, { C_TOTAL, 0.95, "total amount to be paid" },
	{ C_TOTAL, 0.95, "te betalen" }, { C_TOTAL, 1.00, "totaal te betalen" },
	/* previous balance */
	{ C_PREV, 1.00, "previous balance" }, { C_PREV, 1.00, "prior balance" },
	{ C_PREV, 0.90, "previous bill" }, { C_PREV, 1.00, "previous bill amount" },
	{ C_PREV, 1.00, "previous amount due" }, { C_PREV, 1.00, "previous statement balance" },
	{ C_PREV, 0.95, "balance forward" }, { C_PREV, 1.00, "balance brought forward" },
	{ C_PREV, 0.90, "brought forward" }, { C_PREV, 1.00, "opening balance" },
	{ C_PREV, 0.90, "last bill" }, { C_PREV, 1.00, "last bill amount" },
	{ C_PREV, 0.90, "your last bill" }, { C_PREV, 1.00, "amount of last bill" },
	{ C_PREV, 1.00, "balance from last bill" }, { C_PREV, 1.00, "balance from previous bill" },
	{ C_PREV, 0.90, "previous charges" }, { C_PREV, 0.90, "last statement balance" },
	{ C_PREV, 0.90, "previous statement" }, { C_PREV, 0.90, "balance b f" },
	{ C_PREV, 0.90, "vorheriger saldo" }, { C_PREV, 0.90, "solde pr\xc3\xa9" "c\xc3\xa9" "dent" },
	{ C_PREV, 0.90, "saldo anterior" }, { C_PREV, 0.90, "balance carried forward" },
	{ C_PREV, 0.85, "carried forward" }, { C_PREV, 1.00, "balance at last statement" },
	{ C_PREV, 0.95, "balance from last statement" }, { C_PREV, 0.90, "last invoice" },
	{ C_PREV, 0.95, "previous invoice" }, { C_PREV, 0.95, "last statement" }, { C_PREV, 0.90, "previous amount" },
	/* payments received */
	{ C_PAY, 1.00, "payments received" }, { C_PAY, 1.00, "payment received" },
	{ C_PAY, 0.75, "payments" }, { C_PAY, 0.50, "payment" },
	{ C_PAY, 1.00, "payment thank you" }, { C_PAY, 1.00, "payments thank you" },
	{ C_PAY, 0.95, "less payments" }, { C_PAY, 0.95, "thank you for your payment" },
	{ C_PAY, 0.90, "amount paid" }, { C_PAY, 0.90, "total payments" },
	{ C_PAY, 0.90, "payments credits" }, { C_PAY, 0.90, "payments and credits" },
	{ C_PAY, 0.90, "payment applied" }, { C_PAY, 0.90, "payments applied" },
	{ C_PAY, 0.95, "payments received since last bill" }, { C_PAY, 0.85, "zahlungen" },
	{ C_PAY, 0.90, "paiements re\xc3\xa7us" }, { C_PAY, 0.90, "pagos recibidos" },
	{ C_PAY, 0.60, "paid" }, { C_PAY, 1.00, "amount paid since your last bill" },
	{ C_PAY, 1.00, "paid since your last bill" }, { C_PAY, 1.00, "paid since last bill" }, { C_PAY, 1.00, "payments since last statement" },
	{ C_PAY, 1.00, "payments since last bill" }, { C_PAY, 1.00, "payment since last bill" },
	{ C_PAY, 1.00, "payments since your last bill" }, { C_PAY, 1.00, "payment since last statement" }, { C_PAY, 0.90, "payment received thank you" },
	/* current charges */
	{ C_CHARGES, 1.00, "current charges" }, { C_CHARGES, 1.00, "total current charges" },
	{ C_CHARGES, 1.00, "new charges" }, { C_CHARGES, 1.00, "total new charges" },
	{ C_CHARGES, 0.80, "current bill" }, { C_CHARGES, 0.95, "charges this period" },
	{ C_CHARGES, 1.00, "total charges this period" }, { C_CHARGES, 0.95, "this period's charges" },
	{ C_CHARGES, 0.95, "current period charges" }, { C_CHARGES, 0.95, "charges for this period" },
	{ C_CHARGES, 0.75, "total charges" }, { C_CHARGES, 0.90, "current month charges" },
	{ C_CHARGES, 0.85, "total this bill" }, { C_CHARGES, 0.90, "this month's charges" },
	{ C_CHARGES, 0.85, "amount of this bill" }, { C_CHARGES, 0.70, "this bill" },
	{ C_CHARGES, 0.90, "charges this month" }, { C_CHARGES, 0.85, "neue kosten" },
	{ C_CHARGES, 0.85, "charges du mois" }, { C_CHARGES, 0.85, "nouveaux frais" },
	{ C_CHARGES, 0.85, "total current bill" }, { C_CHARGES, 0.90, "current * charges" },
	{ C_CHARGES, 0.95, "total current * charges" }, { C_CHARGES, 0.90, "charges on this bill" },
	{ C_CHARGES, 0.95, "patient responsibility this statement" },
	{ C_CHARGES, 0.85, "patient responsibility" }, { C_CHARGES, 0.90, "total charges for this period" }, { C_CHARGES, 0.90, "your new charges" },
	{ C_CHARGES, 0.90, "new charges this month" }, { C_CHARGES, 0.85, "charges this invoice" }, { C_CHARGES, 0.85, "current invoice" },
	{ C_CHARGES, 0.90, "charges this statement" }, { C_CHARGES, 0.85, "water sewer charges" },
	{ C_CHARGES, 0.85, "water & sewer charges" }, { C_CHARGES, 0.85, "charges this bill" }, { C_CHARGES, 0.85, "current month's charges" },
	/* adjustments */
	{ C_ADJ, 0.90, "adjustments" }, { C_ADJ, 0.90, "adjustment" },
	{ C_ADJ, 0.80, "total credits" }, { C_ADJ, 0.80, "credits and adjustments" },
	{ C_ADJ, 0.80, "other adjustments" },
	{ C_SUBTOTAL, 0.90, "subtotal" }, { C_SUBTOTAL, 0.90, "sub total" },
	{ C_SUBTOTAL, 0.90, "sub-total" },
	/* account number */
	{ C_ACCOUNT, 1.00, "account number" }, { C_ACCOUNT, 0.95, "account no" },
	{ C_ACCOUNT, 0.95, "account #" }, { C_ACCOUNT, 0.95, "account nr" },
	{ C_ACCOUNT, 0.90, "acct no" }, { C_ACCOUNT, 0.90, "acct #" },
	{ C_ACCOUNT, 0.90, "acct number" }, { C_ACCOUNT, 0.75, "acct" },
	{ C_ACCOUNT, 0.60, "account" }, { C_ACCOUNT, 0.50, "customer number" },
	{ C_ACCOUNT, 0.50, "customer no" }, { C_ACCOUNT, 0.50, "customer #" },
	{ C_ACCOUNT, 1.00, "customer account number" }, { C_ACCOUNT, 0.90, "account id" },
	{ C_ACCOUNT, 0.50, "customer id" }, { C_ACCOUNT, 0.80, "account ref" },
	{ C_ACCOUNT, 0.85, "account reference" }, { C_ACCOUNT, 0.90, "account reference number" },
	{ C_ACCOUNT, 0.85, "a c no" }, { C_ACCOUNT, 0.90, "kundennummer" },
	{ C_ACCOUNT, 0.85, "kundennr" }, { C_ACCOUNT, 0.80, "vertragskonto" },
	{ C_ACCOUNT, 0.90, "num\xc3\xa9ro de client" }, { C_ACCOUNT, 0.90, "numero de client" },
	{ C_ACCOUNT, 0.90, "n\xc3\xba" "mero de cliente" }, { C_ACCOUNT, 0.90, "numero de cliente" },
	{ C_ACCOUNT, 0.90, "codice cliente" }, { C_ACCOUNT, 0.90, "klantnummer" },
	{ C_ACCOUNT, 0.80, "policy number" }, { C_ACCOUNT, 0.80, "membership number" },
	{ C_ACCOUNT, 1.00, "billing account number" }, 	{ C_ACCOUNT, 0.95, "your account number" }, { C_ACCOUNT, 0.90, "customer account" },
	{ C_ACCOUNT, 0.90, "account num" }, { C_ACCOUNT, 0.95, "contract account" },
	{ C_ACCOUNT, 0.95, "contract account number" }, { C_ACCOUNT, 0.95, "billing account" },
	/* bill number */
	{ C_BILLNO, 1.00, "invoice number" }, { C_BILLNO, 0.95, "invoice no" },
	{ C_BILLNO, 0.95, "invoice #" }, { C_BILLNO, 0.55, "invoice" },
	{ C_BILLNO, 1.00, "bill number" }, { C_BILLNO, 0.90, "bill no" },
	{ C_BILLNO, 0.90, "bill #" }, { C_BILLNO, 0.95, "statement number" },
	{ C_BILLNO, 0.90, "statement no" }, { C_BILLNO, 0.90, "statement #" },
	{ C_BILLNO, 0.90, "invoice id" }, { C_BILLNO, 0.70, "document number" },
	{ C_BILLNO, 0.90, "bill id" }, { C_BILLNO, 0.95, "rechnungsnummer" },
	{ C_BILLNO, 0.90, "rechnung nr" }, { C_BILLNO, 0.95, "num\xc3\xa9ro de facture" },
	{ C_BILLNO, 0.95, "n\xc3\xba" "mero de factura" }, { C_BILLNO, 0.95, "factuurnummer" },
	{ C_BILLNO, 1.00, "tax invoice number" }, { C_BILLNO, 0.90, "invoice nr" },
	{ C_BILLNO, 0.90, "bill reference" }, { C_BILLNO, 0.90, "invoice reference" },
	/* reference number */
	{ C_REF, 0.95, "reference number" }, { C_REF, 0.95, "reference no" },
	{ C_REF, 0.90, "reference #" }, { C_REF, 0.90, "ref no" }, { C_REF, 0.85, "ref #" },
	{ C_REF, 0.60, "reference" }, { C_REF, 0.50, "ref" },
	{ C_REF, 0.95, "payment reference" }, { C_REF, 0.85, "your reference" },
	{ C_REF, 0.85, "customer reference" }, { C_REF, 0.80, "crn" },
	{ C_REF, 0.80, "verwendungszweck" }, { C_REF, 0.90, "payment reference number" },
	{ C_REF, 0.90, "remittance reference" },
	/* due date */
	{ C_DUE, 1.00, "due date" }, { C_DUE, 1.00, "payment due date" },
	{ C_DUE, 0.95, "payment due" }, { C_DUE, 1.00, "payment due by" },
	{ C_DUE, 0.90, "due by" }, { C_DUE, 0.90, "due on" }, { C_DUE, 0.90, "pay by" },
	{ C_DUE, 1.00, "please pay by" }, { C_DUE, 0.95, "date due" },
	{ C_DUE, 0.85, "due" }, { C_DUE, 0.90, "f\xc3\xa4llig am" },
	{ C_DUE, 1.00, "f\xc3\xa4lligkeitsdatum" }, { C_DUE, 0.95, "zahlbar bis" },
	{ C_DUE, 1.00, "date d'\xc3\xa9" "ch\xc3\xa9" "ance" }, { C_DUE, 0.90, "\xc3\xa9" "ch\xc3\xa9" "ance" },
	{ C_DUE, 1.00, "date limite de paiement" }, { C_DUE, 1.00, "fecha de vencimiento" },
	{ C_DUE, 1.00, "fecha l\xc3\xadmite de pago" }, { C_DUE, 0.85, "vencimiento" },
	{ C_DUE, 0.90, "scadenza" }, { C_DUE, 1.00, "data di scadenza" },
	{ C_DUE, 1.00, "vervaldatum" }, { C_DUE, 1.00, "uiterste betaaldatum" },
	{ C_DUE, 0.90, "to be paid by" }, { C_DUE, 0.90, "payable by" },
	{ C_DUE, 0.80, "direct debit on" }, { C_DUE, 0.80, "will be debited on" },
	{ C_DUE, 0.80, "debit date" }, { C_DUE, 0.85, "pay before" },
	{ C_DUE, 0.95, "payment must be received by" }, { C_DUE, 0.95, "due date for payment" },
	{ C_DUE, 0.90, "payment date" }, { C_DUE, 1.00, "pay in full by" },
	{ C_DUE, 1.00, "please pay the balance by" }, { C_TOTAL, 0.95, "amount due by due date" }, { C_DUE, 0.95, "pay on or before" },
	/* statement date */
	{ C_STMT, 1.00, "statement date" }, { C_STMT, 1.00, "bill date" },
	{ C_STMT, 1.00, "invoice date" }, { C_STMT, 0.95, "billing date" },
	{ C_STMT, 0.95, "date of bill" }, { C_STMT, 0.95, "date of issue" },
	{ C_STMT, 0.95, "issue date" }, { C_STMT, 0.70, "issued" },
	{ C_STMT, 0.90, "date issued" }, { C_STMT, 0.45, "date" },
	{ C_STMT, 0.90, "statement issued" }, { C_STMT, 1.00, "rechnungsdatum" },
	{ C_STMT, 1.00, "date de facture" }, { C_STMT, 1.00, "date de facturation" },
	{ C_STMT, 1.00, "fecha de emisi\xc3\xb3n" }, { C_STMT, 1.00, "fecha de factura" },
	{ C_STMT, 1.00, "data fattura" }, { C_STMT, 1.00, "factuurdatum" },
	{ C_STMT, 0.70, "tax point" }, { C_STMT, 0.70, "print date" },
	{ C_STMT, 0.80, "mailing date" }, { C_STMT, 0.90, "date of statement" },
	{ C_STMT, 0.90, "invoice issued" }, { C_STMT, 0.90, "bill issued" },
	/* service period */
	{ C_PERIOD, 1.00, "service period" }, { C_PERIOD, 1.00, "billing period" },
	{ C_PERIOD, 1.00, "period of service" }, { C_PERIOD, 0.95, "service from" },
	{ C_PERIOD, 0.95, "service dates" }, { C_PERIOD, 0.70, "for service" },
	{ C_PERIOD, 0.95, "usage period" }, { C_PERIOD, 0.90, "for the period" },
	{ C_PERIOD, 0.60, "period" }, { C_PERIOD, 0.90, "statement period" },
	{ C_PERIOD, 0.80, "billing cycle" }, { C_PERIOD, 1.00, "abrechnungszeitraum" },
	{ C_PERIOD, 1.00, "leistungszeitraum" }, { C_PERIOD, 1.00, "p\xc3\xa9riode de facturation" },
	{ C_PERIOD, 1.00, "periodo de facturaci\xc3\xb3n" }, { C_PERIOD, 1.00, "periodo di fatturazione" },
	{ C_PERIOD, 1.00, "factuurperiode" }, { C_PERIOD, 0.90, "service period from" },
	{ C_PERIOD, 0.90, "billing period from" }, { C_PERIOD, 0.85, "bill period" },
	{ C_PERIOD, 0.90, "period covered" }, { C_PERIOD, 1.00, "dates of service" },
	{ C_PERIOD, 0.90, "date of service" }, { C_PERIOD, 0.90, "covers the period" },
	/* remit to */
	{ C_REMIT, 1.00, "remit to" }, { C_REMIT, 1.00, "remit payment to" },
	{ C_REMIT, 1.00, "remittance address" }, { C_REMIT, 1.00, "send payment to" },
	{ C_REMIT, 1.00, "send payments to" }, { C_REMIT, 1.00, "mail payment to" },
	{ C_REMIT, 1.00, "mail payments to" }, { C_REMIT, 1.00, "please send payment to" },
	{ C_REMIT, 1.00, "please mail payment to" }, { C_REMIT, 0.90, "make payment to" },
	{ C_REMIT, 0.90, "payment address" }, { C_REMIT, 0.70, "mail to" },
	{ C_REMIT, 1.00, "please remit to" }, { C_REMIT, 1.00, "please remit payment to" },
	{ C_REMIT, 0.90, "mail your payment to" }, { C_REMIT, 1.00, "mail cheques to" },
	{ C_REMIT, 1.00, "mail checks to" }, { C_REMIT, 1.00, "payments by post to" },
	{ C_REMIT, 0.90, "by post to" }, { C_REMIT, 0.90, "posted to" }, { C_REMIT, 0.90, "send your payment to" },
	/* payable to */
	{ C_PAYABLE, 1.00, "make checks payable to" }, { C_PAYABLE, 1.00, "make cheques payable to" },
	{ C_PAYABLE, 1.00, "make check payable to" }, { C_PAYABLE, 1.00, "make cheque payable to" },
	{ C_PAYABLE, 1.00, "checks payable to" }, { C_PAYABLE, 1.00, "cheques payable to" },
	{ C_PAYABLE, 0.90, "payable to" }, { C_PAYABLE, 0.80, "pay to the order of" },
	{ C_PAYABLE, 0.90, "make all checks payable to" }, { C_PAYABLE, 0.90, "please make checks payable to" },
	/* pay online */
	{ C_PAYURL, 1.00, "pay online" }, { C_PAYURL, 0.90, "pay your bill online" },
	{ C_PAYURL, 0.70, "online at" }, { C_PAYURL, 0.70, "pay at" },
	{ C_PAYURL, 0.80, "pay online at" }, { C_PAYURL, 0.60, "visit" },
	/* the head of a table of charges */
	{ C_ITEMS, 0.90, "description" }, { C_ITEMS, 0.90, "details of charges" },
	{ C_ITEMS, 0.90, "itemized charges" }, { C_ITEMS, 0.90, "charge details" },
	{ C_ITEMS, 0.80, "charges" }, { C_ITEMS, 0.90, "breakdown of charges" },
	{ C_ITEMS, 0.90, "your charges" }, { C_ITEMS, 0.90, "detail of current charges" },
	{ C_ITEMS, 0.90, "summary of current charges" }, { C_ITEMS, 0.90, "what you are paying for" },
	{ C_ITEMS, 0.90, "details of your charges" }, { C_ITEMS, 0.90, "charges by line" },
	{ C_ITEMS, 0.90, "itemised charges" }, { C_ITEMS, 0.90, "charge detail" },
	/* amounts that are none of the fields */
	{ C_TRAP, 1.00, "minimum payment due" }, { C_TRAP, 1.00, "minimum payment" },
	{ C_TRAP, 1.00, "minimum amount due" }, { C_TRAP, 1.00, "minimum due" },
	{ C_TRAP, 1.00, "past due" }, { C_TRAP, 1.00, "past due amount" },
	{ C_TRAP, 1.00, "amount past due" }, { C_TRAP, 1.00, "overdue amount" },
	{ C_TRAP, 1.00, "amount overdue" }, { C_TRAP, 1.00, "amount enclosed" },
	{ C_TRAP, 1.00, "total tax" }, { C_TRAP, 1.00, "late fee" },
	{ C_TRAP, 1.00, "late payment fee" }, { C_TRAP, 1.00, "late payment charge" },
	{ C_TRAP, 1.00, "if paid after" }, { C_TRAP, 1.00, "after due date" },
	{ C_TRAP, 1.00, "year to date" }, { C_TRAP, 1.00, "ytd" },
	{ C_TRAP, 1.00, "average" }, { C_TRAP, 1.00, "daily average" },
	{ C_TRAP, 1.00, "amount due after" }, { C_TRAP, 1.00, "total amount due after" },
	{ C_TRAP, 1.00, "balance after" }, { C_TRAP, 1.00, "tax total" },
	{ C_TRAP, 1.00, "total vat" }, { C_TRAP, 1.00, "vat total" },
	{ C_TRAP, 1.00, "last payment" }, { C_TRAP, 1.00, "credit limit" },
	{ C_TRAP, 1.00, "available credit" }, { C_TRAP, 1.00, "deposit" },
	{ C_TRAP, 1.00, "total usage" }, { C_TRAP, 1.00, "instalment due" },
	{ C_TRAP, 1.00, "installment due" }, { C_TRAP, 1.00, "next instalment" },
	{ C_TRAP, 1.00, "next installment" }, { C_TRAP, 1.00, "further instalments" }, { C_TRAP, 1.00, "usage total" },
};

#define NLABELS	(sizeof(labels) / sizeof(labels[0]))
#define LABEL_WORDS_MAX	6

/* A label split into words, once per call. */
struct lwords {
	int	 n;
	char	 w[LABEL_WORDS_MAX][XF_WORD_LEN];
	size_t	 len[LABEL_WORDS_MAX];
	char	 joined[XF_WORD_LEN];	/* the words run together, as OCR may read them */
	size_t	 jlen;
};

struct word {
	unsigned short	 off, len;	/* in the row's text */
	char		 norm[XF_WORD_LEN];
	char		 fixed[XF_WORD_LEN];	/* OCR confusions undone (ocr_word) */
	size_t		 nlen, flen;
};

struct hit {
	enum cls	 cls;
	float		 strength;
	int		 w0, w1;	/* words [w0, w1) */
	size_t		 end;		/* the text offset after the label */
	size_t		 start;
};

struct seg {
	int		 line;
	size_t		 off, len;
};

struct row {
	int		 page;
	float		 y0, y1, x0, x1;
	float		 conf;
	int		 ocr;
	char		 text[XF_TEXT_MAX + 1];
	size_t		 len;
	int		 nseg;
	struct seg	 seg[XF_SEGS_MAX];
	int		 nword;
	struct word	 w[XF_WORDS_MAX];
	int		 nhit;
	struct hit	 hit[XF_HITS_MAX];
};

struct ctx {
	const struct ex_doc *doc;
	size_t		 nlines;
	struct row	*rows;
	int		 nrows;
	struct lwords	*lw;
	char		 cur[4];	/* the document's currency, "" unknown */
	float		 cur_conf;
	int		 cur_row;	/* where it was seen, -1 */
	int		 exp;
	enum xf_style	 style;
	enum xf_order	 order;
	int		 order_known;	/* decided by a date that can be read one way only */
	int		 oom;
};

/* src[0, len) into dst of size n, cut on a character boundary. */
static void
copy_text(char *dst, size_t n, const char *src, size_t len)
{
	if (len >= n) {
		len = n - 1;
		while (len > 0 && ((unsigned char)src[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* ---- rows ---- */

static float
finite_or(float v, float d)
{
	return isfinite(v) && v > -1e6f && v < 1e6f ? v : d;
}

static int
line_page(const struct ex_line *l)
{
	return l->page >= 1 && l->page <= 100000 ? l->page : 1;
}

/* Order of lines: page, then top, then left, then index (deterministic). */
struct lref {
	int		 page;
	float		 y, x;
	size_t		 i;
};

static int
lref_cmp(const void *a, const void *b)
{
	const struct lref *p = a, *q = b;

	if (p->page != q->page)
		return p->page < q->page ? -1 : 1;
	if (p->y != q->y)
		return p->y < q->y ? -1 : 1;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void	 ocr_word(const char *, char *);

/* Split a row's text into normalised words: lower case, no surrounding
 * punctuation; ':' '/' '|' separate words, '#' is a word of its own. */
static void
row_words(struct row *r)
{
	size_t i = 0, n = r->len;

	r->nword = 0;
	while (i < n && r->nword < XF_WORDS_MAX) {
		size_t s, e, k, o = 0;
		struct word *w;

		while (i < n && (r->text[i] == ' ' || r->text[i] == ':' || r->text[i] == '/' ||
		    r->text[i] == '|' || r->text[i] == '\\' || r->text[i] == '.'))
			i++;
		if (i >= n)
			break;
		s = i;
		if (r->text[i] == '#')
			i++;
		else
			while (i < n && r->text[i] != ' ' && r->text[i] != ':' && r->text[i] != '/' &&
			    r->text[i] != '|' && r->text[i] != '#' && r->text[i] != '\\' &&
			    !(r->text[i] == '.' && i > s && i + 1 < n &&
			    is_alpha((unsigned char)r->text[i - 1]) && is_alpha((unsigned char)r->text[i + 1]) &&
			    (i + 2 >= n || r->text[i + 2] != '.')))
				i++;
		e = i;
		w = &r->w[r->nword];
		for (k = s; k < e && o < XF_WORD_LEN - 1; k++) {
			char c = (char)lower((unsigned char)r->text[k]);

			if ((c == '.' || c == ',' || c == ';' || c == '(' || c == ')' || c == '[' ||
			    c == ']' || c == '*' || c == '"' || c == '!' || c == '?' || c == '-' ||
			    c == '_' || c == '=' || c == '>' || c == '<' || c == '~') &&
			    !(c == '-' && o > 0 && k + 1 < e && r->text[k + 1] != '-'))
				continue;
			w->norm[o++] = c;
		}
		/* "no." and "n°" are "no" */
		w->norm[o] = '\0';
		if (strcmp(w->norm, "n\xc2\xb0") == 0 || strcmp(w->norm, "n\xc2\xba") == 0 ||
		    strcmp(w->norm, "nr") == 0 || strcmp(w->norm, "num") == 0)
			strcpy(w->norm, strcmp(w->norm, "num") == 0 ? "num" : "no");
		if (o == 0)
			continue;
		w->off = (unsigned short)s;
		w->len = (unsigned short)(e - s);
		w->nlen = o;
		ocr_word(w->norm, w->fixed);
		w->flen = strlen(w->fixed);
		r->nword++;
	}
}

/* Levenshtein distance of a and b, stopping above max. */
static int
near(const char *a, const char *b, int max)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int prev[XF_WORD_LEN + 1], cur[XF_WORD_LEN + 1], best;

	if (la > XF_WORD_LEN || lb > XF_WORD_LEN)
		return 0;
	if ((la > lb ? la - lb : lb - la) > (size_t)max)
		return 0;
	for (j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (i = 1; i <= la; i++) {
		cur[0] = (int)i;
		best = cur[0];
		for (j = 1; j <= lb; j++) {
			int c = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
			if (c < best)
				best = c;
		}
		if (best > max)
			return 0;
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	return prev[lb] <= max;
}

/* OCR's usual confusions undone in a word of letters: "rn" for "m",
 * "cl" for "d", "vv" for "w", digits for the letters they look like. */
static void
ocr_word(const char *w, char *out)
{
	size_t i, o = 0;

	for (i = 0; w[i] != '\0' && o < XF_WORD_LEN - 1; i++) {
		char ch = w[i];

		if ((ch == 'r' && w[i + 1] == 'n') || (ch == 'v' && w[i + 1] == 'v') ||
		    (ch == 'c' && w[i + 1] == 'l')) {
			out[o++] = ch == 'r' ? 'm' : ch == 'v' ? 'w' : 'd';
			i++;
			continue;
		}
		out[o++] = ch == '0' ? 'o' : ch == '1' ? 'l' : ch == '5' ? 's' : ch == '|' ? 'l' : ch;
	}
	out[o] = '\0';
}

static int
word_eq(const struct word *w, const char *l, size_t n, int ocr)
{
	size_t d;

	if ((w->nlen == n && memcmp(w->norm, l, n) == 0) || (n == 1 && l[0] == '*'))
		return 1;
	if (!ocr)
		return 0;
	if (w->flen == n && memcmp(w->fixed, l, n) == 0)
		return 1;
	/* OCR: one wrong, lost or extra letter in a word of five or more (two
	 * in one of nine); a cheap look at the ends first */
	if (n < 5)
		return 0;
	d = n >= 9 ? 2 : 1;
	if ((w->nlen > n ? w->nlen - n : n - w->nlen) <= d && (w->norm[0] == l[0] ||
	    w->norm[w->nlen - 1] == l[n - 1]) && near(w->norm, l, (int)d))
		return 1;
	return (w->flen > n ? w->flen - n : n - w->flen) <= d && (w->fixed[0] == l[0] ||
	    w->fixed[w->flen - 1] == l[n - 1]) && near(w->fixed, l, (int)d);
}

/* The labels of a row, longest first at each word. */
static void
row_hits(struct ctx *c, struct row *r)
{
	int p = 0;

	r->nhit = 0;
	while (p < r->nword && r->nhit < XF_HITS_MAX) {
		size_t k, best = NLABELS;
		int bestn = 0, bestprio = 0;

		for (k = 0; k < NLABELS; k++) {
			const struct lwords *lw = &c->lw[k];
			int j;

			/* priority: twice the words; a label read run together one less
			 * than the same label read word by word */
			if (2 * lw->n <= bestprio)
				continue;
			/* "accounnumber": an OCR word of a whole label */
			if (r->ocr && lw->n >= 2 && lw->jlen >= 8 && 2 * lw->n - 1 > bestprio &&
			    r->w[p].nlen + 1 >= lw->jlen &&
			    r->w[p].nlen <= lw->jlen + 1 && near(r->w[p].norm, lw->joined, 1)) {
				best = k;
				bestn = 1;
				bestprio = 2 * lw->n - 1;
				continue;
			}
			if (p + lw->n > r->nword || 2 * lw->n <= bestprio)
				continue;
			for (j = 0; j < lw->n; j++)
				if (!word_eq(&r->w[p + j], lw->w[j], lw->len[j], r->ocr))
					break;
			if (j == lw->n) {
				best = k;
				bestn = lw->n;
				bestprio = 2 * lw->n;
			}
		}
		if (best == NLABELS) {
			p++;
			continue;
		}
		{
			struct hit *h = &r->hit[r->nhit++];
			const struct word *lastw = &r->w[p + bestn - 1];

			h->cls = labels[best].cls;
			h->strength = labels[best].strength;
			h->w0 = p;
			h->w1 = p + bestn;
			h->start = r->w[p].off;
			h->end = (size_t)lastw->off + lastw->len;
			/* "previous/last/past/minimum ... amount due": not this bill's total */
			if (h->cls == C_TOTAL && p > 0) {
				const char *pw = r->w[p - 1].norm;

				if (strcmp(pw, "previous") == 0 || strcmp(pw, "prior") == 0 ||
				    strcmp(pw, "last") == 0 || strcmp(pw, "original") == 0)
					h->cls = C_PREV;
				else if (strcmp(pw, "past") == 0 || strcmp(pw, "minimum") == 0 ||
				    strcmp(pw, "overdue") == 0 || strcmp(pw, "late") == 0 ||
				    strcmp(pw, "average") == 0 || strcmp(pw, "min") == 0)
					h->cls = C_TRAP;
			}
		}
		p += bestn;
	}
}

/* A line's clean text appended to row r as a segment. */
static void
row_add(struct row *r, int li, const struct ex_line *l)
{
	char tmp[XF_TEXT_MAX + 1];
	size_t n = l->text != NULL ? strnlen(l->text, 65536) : 0, m;
	struct seg *s;

	m = xf_clean(tmp, l->text, n);
	if (m == 0 || r->nseg >= XF_SEGS_MAX)
		return;
	if (r->len > 0) {
		if (r->len + 1 + m > XF_TEXT_MAX)
			return;
		r->text[r->len++] = ' ';
	}
	s = &r->seg[r->nseg++];
	s->line = li;
	s->off = r->len;
	s->len = m;
	memcpy(r->text + r->len, tmp, m);
	r->len += m;
	r->text[r->len] = '\0';
}

static int
build_rows(struct ctx *c)
{
	const struct ex_doc *d = c->doc;
	struct lref *ref;
	size_t i, j, n = c->nlines;
	int nr = 0;

	if (n == 0)
		return 0;
	if ((ref = calloc(n, sizeof(*ref))) == NULL ||
	    (c->rows = calloc(n, sizeof(*c->rows))) == NULL) {
		free(ref);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct ex_line *l = &d->lines[i];

		ref[i].page = line_page(l);
		ref[i].y = (finite_or(l->box.y0, 0) + finite_or(l->box.y1, 0)) / 2;
		ref[i].x = finite_or(l->box.x0, 0);
		ref[i].i = i;
	}
	qsort(ref, n, sizeof(*ref), lref_cmp);
	/* a line joins the row whose vertical span holds its middle */
	for (i = 0; i < n; i = j) {
		struct row *r = &c->rows[nr];
		const struct ex_line *l = &d->lines[ref[i].i];
		float y0 = finite_or(l->box.y0, 0), y1 = finite_or(l->box.y1, 0);
		size_t k, cnt;
		struct lref tmp;

		if (y1 < y0)
			y1 = y0;
		for (j = i + 1; j < n && j - i < XF_SEGS_MAX; j++) {
			const struct ex_line *m = &d->lines[ref[j].i];
			float mh = finite_or(m->box.y1, 0) - finite_or(m->box.y0, 0);
			float h = y1 - y0;

			if (ref[j].page != ref[i].page || ref[j].y > y1 || ref[j].y < y0)
				break;
			/* lines of clearly different sizes are not one row */
			if (h > 0 && mh > 0 && (mh > 3.5f * h || h > 3.5f * mh))
				break;
		}
		/* left to right (insertion sort of a few) */
		cnt = j - i;
		for (k = 1; k < cnt; k++) {
			size_t q = i + k;

			tmp = ref[q];
			while (q > i && ref[q - 1].x > tmp.x) {
				ref[q] = ref[q - 1];
				q--;
			}
			ref[q] = tmp;
		}
		memset(r, 0, sizeof(*r));
		r->page = ref[i].page;
		r->y0 = y0, r->y1 = y1;
		r->x0 = 1e6f, r->x1 = -1e6f;
		r->conf = 1;
		for (k = i; k < j; k++) {
			const struct ex_line *m = &d->lines[ref[k].i];
			float conf = finite_or(m->conf, 0);
			int before = r->nseg;

			row_add(r, (int)ref[k].i, m);
			if (r->nseg == before)
				continue;
			if (finite_or(m->box.x0, 0) < r->x0)
				r->x0 = finite_or(m->box.x0, 0);
			if (finite_or(m->box.x1, 0) > r->x1)
				r->x1 = finite_or(m->box.x1, 0);
			if (finite_or(m->box.y1, 0) > r->y1)
				r->y1 = finite_or(m->box.y1, 0);
			if (conf < 0)
				conf = 0;
			if (conf > 1)
				conf = 1;
			if (conf < r->conf)
				r->conf = conf;
			if (m->page >= 1 && d->pages != NULL) {
				size_t p;

				for (p = 0; p < d->npages && p < 1000; p++)
					if (d->pages[p].number == m->page && d->pages[p].ocr)
						r->ocr = 1;
			}
			if (conf < 0.999f)
				r->ocr = 1;
		}
		if (r->nseg == 0)
			continue;
		if (r->x1 < r->x0)
			r->x1 = r->x0;
		row_words(r);
		row_hits(c, r);
		nr++;
	}
	free(ref);
	c->nrows = nr;
	return 0;
}

/* The line box holding text offset off of row r. */
static const struct ex_line *
row_line_at(const struct ctx *c, const struct row *r, size_t off)
{
	int k;

	for (k = r->nseg - 1; k > 0; k--)
		if (off >= r->seg[k].off)
			break;
	return &c->doc->lines[r->seg[k].line];
}

/* The x of text offset off in row r, by its share of its line's width. */
static float
row_x_at(const struct ctx *c, const struct row *r, size_t off)
{
	int k;
	const struct ex_line *l;
	float x0, x1;

	for (k = r->nseg - 1; k > 0; k--)
		if (off >= r->seg[k].off)
			break;
	l = &c->doc->lines[r->seg[k].line];
	x0 = finite_or(l->box.x0, 0);
	x1 = finite_or(l->box.x1, x0);
	if (r->seg[k].len == 0)
		return x0;
	return x0 + (x1 - x0) * (float)(off - r->seg[k].off) / (float)r->seg[k].len;
}

/* ---- the document's currency, number style and date order ---- */

static int
upper2(const char *s, size_t i, size_t n, const char *const *set, size_t nset)
{
	size_t k;

	if (i + 2 > n || (i > 0 && (is_alpha((unsigned char)s[i - 1]) || is_digit((unsigned char)s[i - 1]))))
		return 0;
	for (k = 0; k < nset; k++) {
		size_t m = strlen(set[k]);

		if (i + m <= n && memcmp(s + i, set[k], m) == 0 &&
		    (i + m == n || !is_alpha((unsigned char)s[i + m])))
			return (int)m;
	}
	return 0;
}

static int
digits_at(const char *s, size_t i, size_t n, size_t count)
{
	size_t k;

	for (k = 0; k < count; k++)
		if (i + k >= n || !is_digit((unsigned char)s[i + k]))
			return 0;
	return i + count == n || !is_digit((unsigned char)s[i + count]);
}

/*
 * Which dollar a bare "$" is, by the addresses the bill prints: a US state
 * and a ZIP code ("IL 62704"), a Canadian province and postal code ("ON
 * K1P 5J9"), an Australian state and postcode ("NSW 2000"). Votes into
 * us, ca, au.
 */
static void
dollar_votes(const char *s, size_t n, int *us, int *ca, int *au)
{
	static const char *const states[] = { "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE",
	    "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI",
	    "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK",
	    "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
	    "DC" };
	static const char *const provinces[] = { "AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU",
	    "ON", "PE", "QC", "SK", "YT" };
	static const char *const au_states[] = { "NSW", "VIC", "QLD", "TAS", "ACT", "WA", "SA",
	    "NT" };
	size_t i, m;

	for (i = 0; i + 6 < n; i++) {
		if ((m = upper2(s, i, n, states, sizeof(states) / sizeof(states[0]))) != 0 &&
		    s[i + m] == ' ' && digits_at(s, i + m + 1, n, 5))
			(*us)++;
		if ((m = upper2(s, i, n, provinces, sizeof(provinces) / sizeof(provinces[0]))) != 0 &&
		    s[i + m] == ' ' && i + m + 7 < n + 1 && is_alpha((unsigned char)s[i + m + 1]) &&
		    is_digit((unsigned char)s[i + m + 2]) && is_alpha((unsigned char)s[i + m + 3]) &&
		    s[i + m + 4] == ' ' && i + m + 7 < n && is_digit((unsigned char)s[i + m + 5]) &&
		    is_alpha((unsigned char)s[i + m + 6]) && is_digit((unsigned char)s[i + m + 7]))
			(*ca)++;
		if ((m = upper2(s, i, n, au_states, sizeof(au_states) / sizeof(au_states[0]))) != 0 &&
		    s[i + m] == ' ' && digits_at(s, i + m + 1, n, 4))
			(*au)++;
	}
}

/* word in low as a word of its own ("hst", not the "hst" of "Northstar") */
static int
has_word(const char *low, const char *word)
{
	const char *p = low;
	size_t n = strlen(word);

	while ((p = strstr(p, word)) != NULL) {
		if ((p == low || !is_alpha((unsigned char)p[-1])) && !is_alpha((unsigned char)p[n]))
			return 1;
		p++;
	}
	return 0;
}

static void
doc_currency(struct ctx *c)
{
	static const char *const hints_cad[] = { "gst/hst", "hst", "qst", "canada", "canadian" };
	static const char *const hints_aud[] = { "abn", "australia", "bpay", ".com.au" };
	static const char *const hints_nzd[] = { "new zealand", ".co.nz" };
	int counts[64], dollar = 0, ncodes = 0, best = -1, r, k, cad = 0, aud = 0, nzd = 0, usd = 0;
	char found[64][4];
	int first_row[64];

	for (r = 0; r < c->nrows; r++) {
		const struct row *row = &c->rows[r];
		size_t i, len;
		char low[XF_TEXT_MAX + 1];

		for (i = 0; i < row->len; i++)
			low[i] = (char)lower((unsigned char)row->text[i]);
		low[row->len] = '\0';
		for (k = 0; k < (int)(sizeof(hints_cad) / sizeof(hints_cad[0])); k++)
			if (has_word(low, hints_cad[k]))
				cad++;
		for (k = 0; k < (int)(sizeof(hints_aud) / sizeof(hints_aud[0])); k++)
			if (has_word(low, hints_aud[k]))
				aud++;
		for (k = 0; k < (int)(sizeof(hints_nzd) / sizeof(hints_nzd[0])); k++)
			if (has_word(low, hints_nzd[k]))
				nzd++;
		dollar_votes(row->text, row->len, &usd, &cad, &aud);
		for (i = 0; i < row->len; i++) {
			const char *code = xf_currency_at(row->text, i, row->len, &len);
			int nearnum = 0;

			if (code == NULL)
				continue;
			/* a code counts beside a number or after "currency" */
			if (len == 3 && code[0] != '$' && strcmp(code, "$") != 0) {
				size_t a = i + len;

				if ((a < row->len && (is_digit((unsigned char)row->text[a]) ||
				    (row->text[a] == ' ' && a + 1 < row->len &&
				    is_digit((unsigned char)row->text[a + 1])))) ||
				    (i > 0 && is_digit((unsigned char)row->text[i - 1])) ||
				    (i > 1 && row->text[i - 1] == ' ' && (is_digit((unsigned char)row->text[i - 2]) ||
				    row->text[i - 2] == ')')) ||
				    strstr(low, "currency") != NULL || strstr(low, "amounts") != NULL ||
				    strstr(low, "dollars") != NULL ||
				    /* a column head "Amount (AUD)" */
				    (i > 0 && row->text[i - 1] == '(' && i + 3 < row->len && row->text[i + 3] == ')') ||
				    strstr(low, "w\xc3\xa4hrung") != NULL || strstr(low, "devise") != NULL)
					nearnum = 1;
				if (!nearnum && !(row->text[i] >= 'A' && row->text[i] <= 'Z'))
					continue;
				if (!nearnum)
					continue;
			}
			if (strcmp(code, "$") == 0) {
				dollar++;
				i += len - 1;
				continue;
			}
			for (k = 0; k < ncodes; k++)
				if (strcmp(found[k], code) == 0)
					break;
			if (k == ncodes && ncodes < 64) {
				memcpy(found[k], code, 4);
				counts[k] = 0;
				first_row[k] = r;
				ncodes++;
			}
			if (k < ncodes)
				counts[k]++;
			i += len - 1;
		}
	}
	for (k = 0; k < ncodes; k++)
		if (best < 0 || counts[k] > counts[best])
			best = k;
	c->cur[0] = '\0';
	c->cur_row = -1;
	c->cur_conf = 0;
	if (best >= 0) {
		memcpy(c->cur, found[best], 4);
		c->cur_row = first_row[best];
		c->cur_conf = ncodes == 1 ? 0.95f : 0.8f;
		/* "$" beside a code of another dollar: the code says which */
		if (dollar > 0 && strcmp(c->cur, "USD") != 0 && strcmp(c->cur, "CAD") != 0 &&
		    strcmp(c->cur, "AUD") != 0 && strcmp(c->cur, "NZD") != 0 &&
		    strcmp(c->cur, "HKD") != 0 && strcmp(c->cur, "SGD") != 0 &&
		    strcmp(c->cur, "MXN") != 0 && dollar > counts[best])
			c->cur_conf = 0.6f;
	} else if (dollar > 0) {
		/* a bare "$": the country the addresses and words point to, sure
		 * only when one country alone is pointed to */
		int v[4] = { usd, cad, aud, nzd }, top = 0, n2 = 0;
		static const char *const dollars[4] = { "USD", "CAD", "AUD", "NZD" };

		for (k = 1; k < 4; k++)
			if (v[k] > v[top])
				top = k;
		for (k = 0; k < 4; k++)
			if (v[k] > 0)
				n2++;
		strcpy(c->cur, dollars[top]);
		c->cur_conf = v[top] > 0 && n2 == 1 ? 0.9f : 0.6f;
	}
	c->exp = c->cur[0] != '\0' ? money_exponent(c->cur) : 2;
	if (c->exp < 0)
		c->exp = 2;
}

static void
doc_style(struct ctx *c)
{
	int dot = 0, comma = 0, r;

	for (r = 0; r < c->nrows; r++) {
		const char *s = c->rows[r].text;
		size_t n = c->rows[r].len, i;

		/* "d.dd" and "d,dd" closing a number: the decimal separator */
		for (i = 1; i + 2 < n; i++) {
			if ((s[i] != '.' && s[i] != ',') || !is_digit((unsigned char)s[i - 1]) ||
			    !is_digit((unsigned char)s[i + 1]) || !is_digit((unsigned char)s[i + 2]))
				continue;
			if (i + 3 < n && (is_digit((unsigned char)s[i + 3]) || s[i + 3] == '.' ||
			    s[i + 3] == ',' || s[i + 3] == '/' || s[i + 3] == '-'))
				continue;
			/* not the middle of a date "04.12.26" */
			if (i >= 3 && (s[i - 3] == '.' || s[i - 3] == '/' || s[i - 3] == '-'))
				continue;
			if (s[i] == '.')
				dot++;
			else
				comma++;
		}
	}
	c->style = comma > dot ? XF_STYLE_COMMA : XF_STYLE_DOT;
}

static void
doc_order(struct ctx *c)
{
	int dmy = 0, mdy = 0, r;

	for (r = 0; r < c->nrows; r++) {
		const struct row *row = &c->rows[r];
		struct xf_date dt;
		size_t from = 0;
		int k;

		for (k = 0; k < 8 && from < row->len &&
		    xf_date_find(row->text, row->len, from, XF_ORDER_MDY, &dt); k++) {
			if (dt.a > 12 && dt.b <= 12)
				dmy++;
			else if (dt.b > 12 && dt.a <= 12)
				mdy++;
			from = dt.end;
		}
	}
	/* US dollars are month first; pounds, euros and the like day first */
	c->order_known = dmy != mdy || strcmp(c->cur, "USD") == 0 || strcmp(c->cur, "GBP") == 0 ||
	    strcmp(c->cur, "EUR") == 0 || strcmp(c->cur, "AUD") == 0 || strcmp(c->cur, "NZD") == 0 ||
	    strcmp(c->cur, "INR") == 0;
	if (dmy != mdy)
		c->order = dmy > mdy ? XF_ORDER_DMY : XF_ORDER_MDY;
	else if (strcmp(c->cur, "USD") == 0 || (c->cur[0] == '\0' && c->style == XF_STYLE_DOT))
		c->order = XF_ORDER_MDY;
	else
		c->order = XF_ORDER_DMY;
}

/* ---- candidates ---- */

enum vtype { V_AMOUNT, V_DATE, V_IDENT, V_PERIOD };

struct cand {
	float		 score;
	int		 row;
	size_t		 start, end;	/* the value's bytes in its row */
	long long	 minor;		/* V_AMOUNT */
	char		 cur[4];
	int		 y, m, d;	/* V_DATE; V_PERIOD's start */
	int		 y2, m2, d2;	/* V_PERIOD's end */
	int		 ambiguous;
	char		 ident[64];	/* V_IDENT */
	int		 page;
};

struct field {
	int		 n;
	struct cand	 c[XF_CANDS_MAX];
};

/* The end of the text a label's value may be in: the next label of the row. */
static size_t
segment_end(const struct row *r, int h)
{
	return h + 1 < r->nhit ? r->hit[h + 1].start : r->len;
}

static int
ident_word_ok(const char *s, size_t n, int *digits)
{
	size_t i;
	int d = 0;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (is_digit(ch))
			d++;
		else if (!is_alpha(ch) && ch != '-' && ch != '/' && ch != '.')
			return 0;
	}
	*digits = d;
	return 1;
}

static int
filler(const char *w, size_t n)
{
	static const char *const words[] = { "no", "number", "num", "nr", "is", "id", "ref",
	    "n\xc2\xb0", "nummer", "numero", "n\xc3\xbamero", "of", "the", "your" };
	char low[16];
	size_t i, k;

	if (n == 0 || n >= sizeof(low))
		return 0;
	for (i = 0; i < n; i++)
		low[i] = (char)lower((unsigned char)w[i]);
	low[n] = '\0';
	if (low[n - 1] == '.')
		low[n - 1] = '\0';
	for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (strcmp(low, words[k]) == 0)
			return 1;
	return 0;
}

/* An account, bill or reference number in s[from, to): the first word
 * with a digit, with the digit groups printed after it. */
static int
parse_ident(const char *s, size_t from, size_t to, struct cand *v)
{
	size_t i = from, ws, we, o = 0, k;
	int digits, words = 0;

	while (i < to && words < 4) {
		/* separators and OCR debris before the value: ": # - + * ©" */
		while (i < to && !is_alpha((unsigned char)s[i]) && !is_digit((unsigned char)s[i]))
			i++;
		ws = i;
		while (i < to && s[i] != ' ')
			i++;
		we = i;
		while (we > ws && !is_alpha((unsigned char)s[we - 1]) && !is_digit((unsigned char)s[we - 1]))
			we--;
		if (we == ws)
			break;
		words++;
		/* "No", "Number", "is": filler before the value */
		if (o == 0 && filler(s + ws, we - ws))
			continue;
		if (!ident_word_ok(s + ws, we - ws, &digits) || digits == 0)
			return 0;
		if (we - ws >= sizeof(v->ident) - 1)
			return 0;
		{
			struct xf_date dt;

			if (xf_date_find(s + ws, we - ws, 0, XF_ORDER_MDY, &dt) && dt.start == 0 &&
			    dt.end == we - ws)
				return 0;
		}
		memcpy(v->ident, s + ws, we - ws);
		o = we - ws;
		v->start = ws;
		v->end = we;
		/* "1234 5678 9012": digit groups printed apart */
		while (i < to && s[i] == ' ' && o < sizeof(v->ident) - 8) {
			size_t g = i + 1, e = g;
			int all = 1;

			while (e < to && s[e] != ' ')
				e++;
			if (e - g < 1 || e - g > 6 || !is_digit((unsigned char)s[g]))
				break;
			for (; g < e; g++)
				if (!is_digit((unsigned char)s[g]) && s[g] != '-')
					all = 0;
			if (!all || !is_digit((unsigned char)v->ident[o - 1]))
				break;
			v->ident[o++] = ' ';
			memcpy(v->ident + o, s + i + 1, e - i - 1);
			o += e - i - 1;
			v->end = e;
			i = e;
		}
		v->ident[o] = '\0';
		for (k = 0, digits = 0; k < o; k++)
			digits += is_digit((unsigned char)v->ident[k]);
		return digits >= 4 ? 1 : 0;
	}
	return 0;
}

/* Two dates in s[from, to): a period. */
static int
parse_period(const struct ctx *c, const char *s, size_t from, size_t to, struct cand *v)
{
	struct xf_date a, b;

	if (!xf_date_find(s, to, from, c->order, &a))
		return 0;
	if (!xf_date_find(s, to, a.end, c->order, &b) || b.start - a.end > 12)
		return 0;
	if (b.y * 400 + b.m * 32 + b.d < a.y * 400 + a.m * 32 + a.d)
		return 0;
	v->y = a.y, v->m = a.m, v->d = a.d;
	v->y2 = b.y, v->m2 = b.m, v->d2 = b.d;
	v->ambiguous = a.ambiguous || b.ambiguous;
	v->start = a.start;
	v->end = b.end;
	return 1;
}

/* The first value of type t in row text s[from, to), into v. */
static int
parse_value(const struct ctx *c, const struct row *r, enum vtype t, size_t from, size_t to,
    struct cand *v)
{
	struct xf_amount a;
	struct xf_date dt;

	if (from >= to)
		return 0;
	switch (t) {
	case V_AMOUNT:
		if (!xf_amount_find(r->text, to, from, c->style, c->exp, 0, r->ocr, &a))
			return 0;
		v->minor = a.minor;
		memcpy(v->cur, a.cur, 4);
		v->start = a.start;
		v->end = a.end;
		return 1;
	case V_DATE:
		if (!xf_date_find(r->text, to, from, c->order, &dt))
			return 0;
		v->y = dt.y, v->m = dt.m, v->d = dt.d;
		v->ambiguous = dt.ambiguous;
		v->start = dt.start;
		v->end = dt.end;
		return 1;
	case V_IDENT:
		return parse_ident(r->text, from, to, v);
	case V_PERIOD:
		return parse_period(c, r->text, from, to, v);
	}
	return 0;
}

/* Rows of the same page whose vertical spans overlap by half. */
static int
same_row(const struct row *a, const struct row *b)
{
	float lo = a->y0 > b->y0 ? a->y0 : b->y0, hi = a->y1 < b->y1 ? a->y1 : b->y1;
	float ha = a->y1 - a->y0, hb = b->y1 - b->y0, h = ha < hb ? ha : hb;

	return a->page == b->page && hi - lo >= 0.5f * (h > 0 ? h : 1);
}

/*
 * The value of type t a label (row ri, hit h) announces: after it in its
 * row, else in the row just below (nearest to the label's x, a table's
 * header over its values), else just above (a big amount over its
 * caption). 1 and *v (score = strength, lowered for the farther places).
 */
static int
label_value(const struct ctx *c, int ri, int h, enum vtype t, struct cand *v)
{
	const struct row *r = &c->rows[ri];
	const struct hit *ht = &r->hit[h];
	float lx0 = row_x_at(c, r, ht->start), lx1 = row_x_at(c, r, ht->end);
	float lh = r->y1 - r->y0, lmid = (lx0 + lx1) / 2;
	int dir, k;

	memset(v, 0, sizeof(*v));
	if (lh < 4)
		lh = 4;
	if (parse_value(c, r, t, ht->end, segment_end(r, h), v)) {
		v->row = ri;
		v->score = ht->strength;
		return 1;
	}
	/* a row beside it (a smaller value line set next to a big label) */
	for (k = ri - 3; k <= ri + 3; k++) {
		const struct row *b;

		if (k < 0 || k == ri || k >= c->nrows)
			continue;
		b = &c->rows[k];
		if (!same_row(r, b) || b->x0 < lx1 - 5 || b->x0 > lx1 + 300)
			continue;
		if (parse_value(c, b, t, 0, b->nhit > 0 ? b->hit[0].start : b->len, v)) {
			v->row = k;
			v->score = ht->strength * 0.95f;
			return 1;
		}
		memset(v, 0, sizeof(*v));
	}
	/* a label that ends a line of running text: the value opens the next line */
	if (h + 1 == r->nhit && r->len - ht->end <= 1 && ri + 1 < c->nrows &&
	    r->seg[r->nseg - 1].len > 40) {
		const struct row *b = &c->rows[ri + 1];

		if (b->page == r->page && b->y0 - r->y1 < 1.5f * lh && fabsf(b->x0 - r->x0) < 20 &&
		    parse_value(c, b, t, 0, b->nhit > 0 ? b->hit[0].start : b->len, v) && v->start <= 6) {
			v->row = ri + 1;
			v->score = ht->strength * 0.85f;
			return 1;
		}
		memset(v, 0, sizeof(*v));
	}
	/* the value below (then above) the label, in a row without a label of its own
	 * before the value */
	for (dir = 1; dir >= -1; dir -= 2) {
		int steps = 0;

		for (k = ri + dir; k >= 0 && k < c->nrows && steps < 3; k += dir) {
			const struct row *b = &c->rows[k];
			float gap = dir > 0 ? b->y0 - r->y1 : r->y0 - b->y1;
			struct cand best, tmp;
			float bestd = 1e9f;
			size_t from = 0;
			int found = 0, n;

			if (b->page != r->page || gap > 2.5f * lh)
				break;
			if (same_row(r, b))
				continue;
			steps++;
			if (b->x1 < lx0 - 40 || b->x0 > lx1 + 40)
				continue;
			for (n = 0; n < 6 && from < b->len; n++) {
				size_t to = b->len;
				int j;
				float d;

				memset(&tmp, 0, sizeof(tmp));
				for (j = 0; j < b->nhit; j++)
					if (b->hit[j].start >= from) {
						to = b->hit[j].start;
						break;
					}
				if (to <= from || !parse_value(c, b, t, from, to, &tmp)) {
					/* skip over the label in the way */
					if (j < b->nhit) {
						from = b->hit[j].end;
						continue;
					}
					break;
				}
				d = fabsf((row_x_at(c, b, tmp.start) + row_x_at(c, b, tmp.end)) / 2 - lmid);
				if (d < bestd) {
					bestd = d;
					best = tmp;
					found = 1;
				}
				from = tmp.end > from ? tmp.end : from + 1;
			}
			if (found && bestd <= (lx1 - lx0) / 2 + 60) {
				/* a value that belongs to a label of its own row is not this one */
				for (n = 0; n < b->nhit; n++)
					if (b->hit[n].end <= best.start && b->hit[n].cls != C_ITEMS &&
					    (n + 1 == b->nhit || b->hit[n + 1].start >= best.end) &&
					    best.start - b->hit[n].end < 24)
						found = 0;
				if (!found)
					continue;
				*v = best;
				v->row = k;
				v->score = ht->strength * (dir > 0 ? 0.92f : 0.85f);
				return 1;
			}
			if (dir < 0)
				break;
		}
	}
	return 0;
}

static float
row_trust(const struct row *r)
{
	if (!r->ocr)
		return 1;
	return r->conf >= 0.85f ? 0.95f : r->conf >= 0.7f ? 0.88f : r->conf >= 0.5f ? 0.75f : 0.55f;
}

static void
field_add(struct field *f, const struct cand *v)
{
	if (f->n < XF_CANDS_MAX)
		f->c[f->n++] = *v;
}

static int
cand_same(enum vtype t, const struct cand *a, const struct cand *b)
{
	switch (t) {
	case V_AMOUNT:
		return a->minor == b->minor;
	case V_DATE:
		return a->y == b->y && a->m == b->m && a->d == b->d;
	case V_PERIOD:
		return a->y == b->y && a->m == b->m && a->d == b->d && a->y2 == b->y2 &&
		    a->m2 == b->m2 && a->d2 == b->d2;
	case V_IDENT:
		return strcmp(a->ident, b->ident) == 0;
	}
	return 0;
}

/*
 * The winner of a field's candidates: the value with the best score,
 * each other candidate of the same value adding a little (a summary and a
 * stub agree), a rival value as strong lowering it. *conf its confidence;
 * *agree how many candidates carried it. -1 when there are none.
 */
static int
field_pick(enum vtype t, const struct field *f, float *conf, int *agree)
{
	int i, j, best = -1;
	float bests = -1, rival = 0;

	for (i = 0; i < f->n; i++) {
		float s = f->c[i].score;
		int same = 0;

		/* the strongest of its group stands for it, once */
		for (j = 0; j < f->n; j++)
			if (j != i && cand_same(t, &f->c[i], &f->c[j])) {
				if (f->c[j].score > f->c[i].score ||
				    (f->c[j].score == f->c[i].score && j < i))
					break;
				same++;
			}
		if (j < f->n)
			continue;
		s += same > 0 ? (same > 2 ? 0.12f : 0.06f * (float)same) : 0;
		if (s > bests) {
			if (best >= 0 && bests > rival)
				rival = bests;
			bests = s;
			best = i;
			*agree = same + 1;
		} else if (s > rival) {
			rival = s;
		}
	}
	if (best < 0)
		return -1;
	*conf = bests;
	if (rival > 0 && rival >= bests - 0.15f)
		*conf -= 0.3f;
	if (*conf > 1)
		*conf = 1;
	if (*conf < 0.05f)
		*conf = 0.05f;
	return best;
}

static int
row_has(const struct row *r, enum cls cls)
{
	int h;

	for (h = 0; h < r->nhit; h++)
		if (r->hit[h].cls == cls)
			return 1;
	return 0;
}

/* The digits and letters of an identifier. */
static void
squash(const char *s, char *out, size_t n)
{
	size_t o = 0;

	for (; *s != '\0' && o + 1 < n; s++)
		if (is_alpha((unsigned char)*s) || is_digit((unsigned char)*s))
			out[o++] = (char)lower((unsigned char)*s);
	out[o] = '\0';
}

/* An OCR reading that stops short ("1484 1465" beside "1484 1465 05")
 * agrees with the longer one. */
static void
ident_merge(struct field *f)
{
	int i, j;
	char a[64], b[64];

	for (i = 0; i < f->n; i++)
		for (j = 0; j < f->n; j++) {
			size_t la;

			if (i == j)
				continue;
			squash(f->c[i].ident, a, sizeof(a));
			squash(f->c[j].ident, b, sizeof(b));
			la = strlen(a);
			if (la >= 4 && la < strlen(b) && strncmp(a, b, la) == 0 &&
			    f->c[j].ident[strlen(f->c[i].ident)] == ' ')
				memcpy(f->c[i].ident, f->c[j].ident, sizeof(f->c[i].ident));
		}
}

/* Candidates of every label of class cls, read as type t. */
static void
collect(const struct ctx *c, enum cls cls, enum vtype t, struct field *f)
{
	int r, h;

	for (r = 0; r < c->nrows; r++)
		for (h = 0; h < c->rows[r].nhit; h++) {
			struct cand v;

			if (c->rows[r].hit[h].cls != cls || (cls == C_STMT && row_has(&c->rows[r], C_PREV)) ||
			    !label_value(c, r, h, t, &v))
				continue;
			v.score *= row_trust(&c->rows[v.row]);
			if (t == V_DATE && v.ambiguous && !c->order_known)
				v.score *= 0.85f;
			v.page = c->rows[v.row].page;
			field_add(f, &v);
		}
	if (t == V_IDENT)
		ident_merge(f);
}

/* ---- JSON ---- */

static struct json_object *
jnum(double v)
{
	char buf[32];

	if (!isfinite(v))
		v = 0;
	v = round(v * 100) / 100;
	snprintf(buf, sizeof(buf), "%.2f", v);
	/* "12.50" reads 12.5 */
	{
		size_t n = strlen(buf);

		while (n > 0 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (n > 0 && buf[n - 1] == '.')
			buf[--n] = '\0';
		if (strcmp(buf, "-0") == 0)
			strcpy(buf, "0");
	}
	return json_object_new_double_s(v, buf);
}

/* obj[key] = val, val freed when obj is NULL or the add fails. */
static void
jset(struct ctx *c, struct json_object *obj, const char *key, struct json_object *val,
    int nullable)
{
	if (obj == NULL || (val == NULL && !nullable) ||
	    json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		c->oom = 1;
	}
}

static struct json_object *
jstr(struct ctx *c, const char *s)
{
	struct json_object *o = json_object_new_string(s);

	if (o == NULL)
		c->oom = 1;
	return o;
}

static struct json_object *
source_of(struct ctx *c, const struct row *r, size_t start, size_t end)
{
	struct json_object *src = json_object_new_object(), *box = json_object_new_array();
	const struct ex_line *l = row_line_at(c, r, start), *l2 = row_line_at(c, r, end > start ? end - 1 : start);
	float x0 = finite_or(l->box.x0, 0), y0 = finite_or(l->box.y0, 0);
	float x1 = finite_or(l->box.x1, 0), y1 = finite_or(l->box.y1, 0);

	if (l2 != l) {
		if (finite_or(l2->box.x1, 0) > x1)
			x1 = finite_or(l2->box.x1, 0);
		if (finite_or(l2->box.y1, 0) > y1)
			y1 = finite_or(l2->box.y1, 0);
	}
	if (src == NULL || box == NULL) {
		json_object_put(src);
		json_object_put(box);
		c->oom = 1;
		return NULL;
	}
	if (json_object_array_add(box, jnum(x0)) || json_object_array_add(box, jnum(y0)) ||
	    json_object_array_add(box, jnum(x1)) || json_object_array_add(box, jnum(y1)))
		c->oom = 1;
	jset(c, src, "page", json_object_new_int(r->page), 0);
	jset(c, src, "bbox", box, 0);
	return src;
}

/* draft[key] = {value, confidence, source} (value NULL: not found). */
static void
put_field(struct ctx *c, struct json_object *draft, const char *key, struct json_object *value,
    float conf, const struct row *r, size_t start, size_t end)
{
	struct json_object *f = json_object_new_object();

	if (f == NULL) {
		json_object_put(value);
		c->oom = 1;
		return;
	}
	if (value == NULL)
		conf = 0, r = NULL;
	if (conf < 0)
		conf = 0;
	if (conf > 1)
		conf = 1;
	jset(c, f, "value", value, 1);
	jset(c, f, "confidence", jnum(conf), 0);
	jset(c, f, "source", r != NULL ? source_of(c, r, start, end) : NULL, 1);
	jset(c, draft, key, f, 0);
}

static struct json_object *
money_obj(struct ctx *c, long long minor, const char *cur)
{
	struct json_object *o = json_object_new_object();
	char buf[MONEY_TEXT_MAX];

	if (o == NULL) {
		c->oom = 1;
		return NULL;
	}
	jset(c, o, "value", jstr(c, money_format_buf(buf, sizeof(buf), minor, c->exp)), 0);
	jset(c, o, "currency", cur != NULL && cur[0] != '\0' ? jstr(c, cur) : NULL, 1);
	return o;
}

static struct json_object *
date_str(struct ctx *c, int y, int m, int d)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%04d-%02d-%02d", y, m, d);
	return jstr(c, buf);
}

/* An amount field: the picked candidate, or null. */
static void
put_amount(struct ctx *c, struct json_object *draft, const char *key, const struct field *f,
    int i, float conf)
{
	if (i < 0) {
		put_field(c, draft, key, NULL, 0, NULL, 0, 0);
		return;
	}
	put_field(c, draft, key, money_obj(c, f->c[i].minor, c->cur), conf,
	    &c->rows[f->c[i].row], f->c[i].start, f->c[i].end);
}

static void
put_simple(struct ctx *c, struct json_object *draft, const char *key, enum vtype t,
    const struct field *f)
{
	float conf = 0;
	int agree = 0, i = field_pick(t, f, &conf, &agree);
	const struct cand *v;
	struct json_object *val = NULL;

	if (i < 0) {
		put_field(c, draft, key, NULL, 0, NULL, 0, 0);
		return;
	}
	v = &f->c[i];
	if (t == V_DATE)
		val = date_str(c, v->y, v->m, v->d);
	else if (t == V_IDENT)
		val = jstr(c, v->ident);
	else if (t == V_PERIOD) {
		val = json_object_new_object();
		jset(c, val, "start_date", date_str(c, v->y, v->m, v->d), 0);
		jset(c, val, "end_date", date_str(c, v->y2, v->m2, v->d2), 0);
	}
	put_field(c, draft, key, val, conf, &c->rows[v->row], v->start, v->end);
}

/* ---- the fields ---- */

struct amounts {
	struct field	 total, prev, pay, charges, adj;
	int		 ti, pi, yi, ci, ai;
	float		 tconf, pconf, yconf, cconf, aconf;
	int		 tagree;
	int		 balanced;	/* the total is previous - payments + charges */
};

static long long
absll(long long v)
{
	return v < 0 ? -v : v;
}

static void
pick_amounts(struct ctx *c, struct amounts *am)
{
	int agree = 0, r, h;

	memset(am, 0, sizeof(*am));
	collect(c, C_TOTAL, V_AMOUNT, &am->total);
	collect(c, C_PREV, V_AMOUNT, &am->prev);
	collect(c, C_PAY, V_AMOUNT, &am->pay);
	collect(c, C_CHARGES, V_AMOUNT, &am->charges);
	collect(c, C_ADJ, V_AMOUNT, &am->adj);
	am->pi = field_pick(V_AMOUNT, &am->prev, &am->pconf, &agree);
	am->yi = field_pick(V_AMOUNT, &am->pay, &am->yconf, &agree);
	am->ci = field_pick(V_AMOUNT, &am->charges, &am->cconf, &agree);
	am->ai = field_pick(V_AMOUNT, &am->adj, &am->aconf, &agree);
	/*
	 * The balance picks among rival totals: a candidate equal to previous
	 * - payments + charges (+ adjustments) gains; with nothing before
	 * this bill, the charges are the total.
	 */
	if (am->ci >= 0 && am->total.n > 1) {
		long long want = am->charges.c[am->ci].minor, pay;

		if (am->pi >= 0)
			want += am->prev.c[am->pi].minor;
		if (am->yi >= 0) {
			pay = absll(am->pay.c[am->yi].minor);
			want -= pay;
		}
		if (am->ai >= 0)
			want += am->adj.c[am->ai].minor;
		for (r = 0; r < am->total.n; r++)
			if (am->total.c[r].minor == want && (am->pi >= 0 || am->yi >= 0))
				am->total.c[r].score += 0.1f;
	}
	(void)h;
	am->ti = field_pick(V_AMOUNT, &am->total, &am->tconf, &am->tagree);
	if (am->ti >= 0) {
		const struct cand *t = &am->total.c[am->ti];

		/*
		 * previous - payments + charges is this total: the summary
		 * confirms it, whatever rival a weaker reading offered
		 */
		am->balanced = am->ci >= 0 && am->pi >= 0 && am->yi >= 0 &&
		    t->minor == am->prev.c[am->pi].minor - absll(am->pay.c[am->yi].minor) +
		    am->charges.c[am->ci].minor;
		if (am->balanced && t->score >= 0.8f && am->tconf < (t->score < 0.9f ? t->score : 0.9f))
			am->tconf = t->score < 0.9f ? t->score : 0.9f;

		/* OCR digits are trusted only when a second reading or a check agrees */
		if (c->rows[t->row].ocr && am->tagree < 2 && am->tconf > 0.78f)
			am->tconf = 0.78f;
		/* a weak label ("Total", "Balance") alone never makes a total ready */
		if (t->score < 0.8f && am->tconf > 0.7f)
			am->tconf = 0.7f;
		/* nor does a currency only guessed ("$" and no country for it) */
		if (c->cur_conf < 0.8f && strcmp(t->cur, c->cur) != 0 && am->tconf > 0.7f)
			am->tconf = 0.7f;
	}
}

/* ---- payee ---- */

static const char *const company_words[] = {
	"inc", "llc", "ltd", "limited", "plc", "gmbh", "ag", "sa", "sas", "sarl", "bv", "nv",
	"co", "corp", "corporation", "company", "utilities", "utility", "energy", "power",
	"water", "gas", "electric", "electricity", "telecom", "communications", "insurance",
	"bank", "services", "group", "council", "authority", "mobile", "broadband",
	"wireless", "networks", "cable", "internet", "district", "municipal", "city",
	"county", "trust", "holdings", "partners", "solutions", "light", "heat", "waste",
	"stadtwerke", "spa", "srl", "oy", "ab", "as", "pty", "lp", "llp", "pllc", "dac",
	"center", "centre", "clinic", "hospital", "recycling",
};

static const char *const not_payee_words[] = {
	"invoice", "statement", "bill", "receipt", "notice", "account", "date", "page",
	"due", "total", "amount", "customer", "phone", "tel", "fax", "www", "http", "https",
	"summary", "balance", "period", "number", "payment", "paid", "tax", "vat",
	"rechnung", "facture", "factura", "fattura", "factuur", "remit", "mail", "send",
	"to", "dear", "hello", "your", "thank", "address", "email", "e-mail",
	"continued", "for", "please", "patient", "detach", "return", "portion", "stub", "coupon",
};

static int
word_in(const char *w, const char *const *list, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (strcmp(w, list[k]) == 0)
			return 1;
	return 0;
}

/* How much a line of text reads like a company name: 0 not at all. */
static float
name_like(const char *s, size_t n, int *company)
{
	size_t i, letters = 0, digits = 0, words = 0;
	int k = 0;

	*company = 0;
	if (n < 2 || n > 80)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (is_alpha(ch) || ch >= 0x80)
			letters++;
		else if (is_digit(ch))
			digits++;
		if (ch == '@' || ch == '$' || ch == ':')
			return 0;
	}
	if (letters < 3 || digits * 3 > letters || digits > 2)
		return 0;
	/* word by word */
	i = 0;
	while (i < n && k < 12) {
		char w[XF_WORD_LEN];
		size_t o = 0;

		while (i < n && s[i] == ' ')
			i++;
		while (i < n && s[i] != ' ') {
			char ch = (char)lower((unsigned char)s[i]);

			if (o < sizeof(w) - 1 && ch != '.' && ch != ',' && ch != '(' && ch != ')')
				w[o++] = ch;
			i++;
		}
		w[o] = '\0';
		if (o == 0)
			continue;
		words++;
		k++;
		if (word_in(w, not_payee_words, sizeof(not_payee_words) / sizeof(not_payee_words[0])))
			return 0;
		if (word_in(w, company_words, sizeof(company_words) / sizeof(company_words[0])))
			*company = 1;
	}
	if (words == 0 || words > 8)
		return 0;
	return 1;
}

/* The same name, whatever the case, spaces and punctuation. */
static int
name_eq(const char *a, const char *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (a[i] != '\0' && !is_alpha((unsigned char)a[i]) && !is_digit((unsigned char)a[i]) &&
		    (unsigned char)a[i] < 0x80)
			i++;
		while (b[j] != '\0' && !is_alpha((unsigned char)b[j]) && !is_digit((unsigned char)b[j]) &&
		    (unsigned char)b[j] < 0x80)
			j++;
		if (a[i] == '\0' || b[j] == '\0')
			return a[i] == b[j];
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[j]))
			return 0;
		i++, j++;
	}
}

/*
 * Where a name in s[from, to) stops: before OCR debris ("~", "|", a word
 * of symbols), a spaced dash, or a trailing comma or colon.
 */
static size_t
name_end(const char *s, size_t from, size_t to)
{
	size_t i = from, ws;
	int mixed = 0;

	while (i < to) {
		int bad = 0, letters = 0, lowers = 0;
		char w[XF_WORD_LEN];
		size_t o = 0;

		while (i < to && s[i] == ' ')
			i++;
		ws = i;
		while (i < to && s[i] != ' ') {
			unsigned char ch = (unsigned char)s[i];

			if (is_alpha(ch) || is_digit(ch) || ch >= 0x80)
				letters++;
			else if (ch != '.' && ch != ',' && ch != '&' && ch != '\'' && ch != '-' &&
			    ch != '(' && ch != ')')
				bad = 1;
			if (ch >= 'a' && ch <= 'z')
				lowers++;
			if (o < sizeof(w) - 1 && ch != '.' && ch != ',' && ch != '(' && ch != ')')
				w[o++] = (char)lower(ch);
			i++;
		}
		w[o] = '\0';
		/* "Tulsa City Council UTILITY BILL": capitals after a name in
		 * mixed case are the document's title (a legal form, "LLC",
		 * "DAC", is the name's) */
		if (mixed && lowers == 0 && letters >= 3 && !bad && !(o <= 4 &&
		    word_in(w, company_words, sizeof(company_words) / sizeof(company_words[0])))) {
			i = ws;
			break;
		}
		if (lowers > 0)
			mixed = 1;
		/* "Prairie Gas and Electric: |" */
		if (bad && i - ws > 1 && (s[i - 1] == ':' || s[i - 1] == ';')) {
			size_t k;

			for (k = ws, bad = 0; k + 1 < i; k++)
				if (!is_alpha((unsigned char)s[k]) && !is_digit((unsigned char)s[k]) &&
				    (unsigned char)s[k] < 0x80 && s[k] != '.' && s[k] != '&' && s[k] != '-' &&
				    s[k] != '\'')
					bad = 1;
			if (!bad) {
				i--;
				break;
			}
		}
		/* debris, or a word no name has ("Your monthly invoice") */
		if (bad || (letters == 0 && strcmp(w, "&") != 0) ||
		    word_in(w, not_payee_words, sizeof(not_payee_words) / sizeof(not_payee_words[0]))) {
			i = ws;
			break;
		}
	}
	while (i > from && (s[i - 1] == ' ' || s[i - 1] == ',' || s[i - 1] == ':' ||
	    s[i - 1] == '-'))
		i--;
	return i;
}

/* A name the payment site spells: "Lakeshore Light and Power" is
 * lakeshorelight-power.example, "Kanto Energy Service" kantoenergyservice. */
static int
domain_eq(const char *name, const char *domain)
{
	char a[96], b[64];
	size_t i = 0, o = 0;

	while (name[i] != '\0' && o + 1 < sizeof(a)) {
		size_t e = i;

		while (name[e] != '\0' && name[e] != ' ')
			e++;
		if (!((e - i == 3 && strncasecmp(name + i, "and", 3) == 0) ||
		    (e - i == 1 && name[i] == '&') ||
		    (e - i == 3 && strncasecmp(name + i, "the", 3) == 0)))
			for (; i < e && o + 1 < sizeof(a); i++)
				if (is_alpha((unsigned char)name[i]) || is_digit((unsigned char)name[i]))
					a[o++] = (char)lower((unsigned char)name[i]);
		i = e;
		while (name[i] == ' ')
			i++;
	}
	a[o] = '\0';
	squash(domain, b, sizeof(b));
	return o >= 4 && (strcmp(a, b) == 0 || name_eq(name, domain));
}

/*
 * OCR spaces a big letterhead's letters apart ("KEYSTO N E GAS S ERVICE"):
 * the same letters printed elsewhere in fewer words are the name as
 * written. 1 when head was respelled.
 */
static int
respell(const struct ctx *c, char *head, size_t size, int head_line)
{
	char want[96], acc[96];
	size_t wl, i, hw = 1;
	int r, p, q, sg, single = 0;

	squash(head, want, sizeof(want));
	wl = strlen(want);
	for (i = 0; head[i] != '\0'; i++) {
		hw += head[i] == ' ';
		/* a letter standing alone: the spacing is OCR's */
		if (is_alpha((unsigned char)head[i]) && (i == 0 || head[i - 1] == ' ') &&
		    (head[i + 1] == ' ' || head[i + 1] == '\0') && head[i] != 'a' && head[i] != 'A')
			single = 1;
	}
	if (wl < 4 || hw < 2 || !single)
		return 0;
	for (r = 0; r < c->nrows; r++) {
		const struct row *row = &c->rows[r];

		for (sg = 0; sg < row->nseg; sg++)
			if (row->seg[sg].line == head_line)
				break;
		if (sg < row->nseg)
			continue;
		for (p = 0; p < row->nword; p++) {
			size_t al = 0;

			for (q = p; q < row->nword && al < wl; q++) {
				const struct word *w = &row->w[q];

				for (i = 0; i < w->len && al + 1 < sizeof(acc); i++) {
					unsigned char ch = (unsigned char)row->text[w->off + i];

					if (is_alpha(ch) || is_digit(ch))
						acc[al++] = (char)lower(ch);
				}
				acc[al] = '\0';
				if (strncmp(acc, want, al < wl ? al : wl) != 0)
					break;
			}
			if (al == wl && strcmp(acc, want) == 0 && (size_t)(q - p) < hw) {
				size_t s0 = row->w[p].off, e0 = row->w[q - 1].off + row->w[q - 1].len;

				/* not a piece of a web address */
				if (e0 - s0 >= size || (s0 > 0 && (row->text[s0 - 1] == '/' ||
				    row->text[s0 - 1] == '.')) || memchr(row->text + s0, '.', e0 - s0) != NULL)
					continue;
				memcpy(head, row->text + s0, e0 - s0);
				head[e0 - s0] = '\0';
				return 1;
			}
		}
	}
	return 0;
}

struct payee {
	char		 name[96];
	float		 conf;
	const struct row *row;
	size_t		 start, end;
	int		 line;		/* when the source is a single line */
};

/* The payee's name: after "payable to", the first line of a remit-to
 * block, or the letterhead (the biggest name-like line at the top of page
 * 1). Two of them agreeing make it sure. */
static void
pick_payee(struct ctx *c, struct payee *p, const char *remit_first, int remit_row,
    const char *domain)
{
	char named[96] = "", head[96] = "";
	float head_score = 0, named_conf = 0, page_h = 792;
	int head_line = -1, named_row = -1, r, h, company = 0, head_company = 0, head_seen = 0;
	size_t i, named_start = 0, named_end = 0;

	memset(p, 0, sizeof(*p));
	p->line = -1;
	/* "Make checks payable to ACME POWER" */
	for (r = 0; r < c->nrows && named[0] == '\0'; r++) {
		const struct row *row = &c->rows[r];

		for (h = 0; h < row->nhit; h++) {
			size_t s = row->hit[h].end, e = segment_end(row, h);
			const struct row *vr = row;

			if (row->hit[h].cls != C_PAYABLE)
				continue;
			while (s < e && (row->text[s] == ' ' || row->text[s] == ':'))
				s++;
			if (s >= e && r + 1 < c->nrows && c->rows[r + 1].page == row->page &&
			    c->rows[r + 1].nhit == 0) {
				vr = &c->rows[r + 1];
				s = 0;
				e = vr->len;
			}
			while (e > s && (vr->text[e - 1] == ' ' || vr->text[e - 1] == ','))
				e--;
			/* the sentence's full stop, not an abbreviation's ("Co.", "Inc.") */
			if (e > s && vr->text[e - 1] == '.') {
				size_t ws = e - 1;

				while (ws > s && vr->text[ws - 1] != ' ')
					ws--;
				if (e - 1 - ws > 4 && memchr(vr->text + ws, '.', e - 1 - ws) == NULL)
					e--;
			}
			/* "... payable to ACME POWER and mail it to ...", not "Light and Power" */
			for (i = s; i + 5 < e; i++)
				if (strncasecmp(vr->text + i, " and mail", 9) == 0 ||
				    strncasecmp(vr->text + i, " and send", 9) == 0 ||
				    strncasecmp(vr->text + i, " and return", 11) == 0 ||
				    strncasecmp(vr->text + i, " and remit", 10) == 0 ||
				    strncasecmp(vr->text + i, " and write", 10) == 0 ||
				    strncasecmp(vr->text + i, " and include", 12) == 0 ||
				    strncmp(vr->text + i, " at ", 4) == 0 || strncmp(vr->text + i, ". ", 2) == 0) {
					e = i;
					break;
				}
			if (e > s && e - s < sizeof(named) &&
			    name_like(vr->text + s, e - s, &company) > 0) {
				memcpy(named, vr->text + s, e - s);
				named[e - s] = '\0';
				named_conf = row->hit[h].strength * 0.9f * row_trust(vr);
				named_row = (int)(vr - c->rows);
				named_start = s;
				named_end = e;
				break;
			}
		}
	}
	if (named[0] == '\0' && remit_first != NULL && remit_first[0] != '\0') {
		int comp;

		if (name_like(remit_first, strlen(remit_first), &comp) > 0) {
			snprintf(named, sizeof(named), "%s", remit_first);
			named_conf = comp ? 0.8f : 0.65f;
			named_row = remit_row;
			named_start = 0;
			named_end = 0;
		}
	}
	/* the letterhead: the tallest name-like line in the top third of page 1 */
	if (c->doc != NULL && c->doc->pages != NULL)
		for (i = 0; i < c->doc->npages && i < 1000; i++)
			if (c->doc->pages[i].number == 1 && isfinite(c->doc->pages[i].height) &&
			    c->doc->pages[i].height > 50)
				page_h = c->doc->pages[i].height;
	for (r = 0; r < c->nrows; r++) {
		const struct row *row = &c->rows[r];
		int sg;

		if (row->page != 1 || row->y0 > page_h * 0.3f)
			continue;
		for (sg = 0; sg < row->nseg; sg++) {
			const struct seg *sp = &row->seg[sg];
			const struct ex_line *l = &c->doc->lines[sp->line];
			float y0 = finite_or(l->box.y0, 0), hgt = finite_or(l->box.y1, 0) - y0, score;
			size_t s = sp->off, e = sp->off + sp->len;
			int comp;

			if (hgt <= 0)
				continue;
			/* an OCR line may run on into the next column's labels */
			for (h = 0; h < row->nhit; h++)
				if (row->hit[h].start >= s && row->hit[h].start < e) {
					e = row->hit[h].start;
					break;
				}
			e = name_end(row->text, s, e);
			if (e <= s || e - s >= sizeof(head))
				continue;
			if (name_like(row->text + s, e - s, &comp) == 0)
				continue;
			/* a name starts with a capital ("acca" is OCR's speck) */
			{
				size_t f = s;

				while (f < e && !is_alpha((unsigned char)row->text[f]) &&
				    (unsigned char)row->text[f] < 0x80)
					f++;
				if (f < e && row->text[f] >= 'a' && row->text[f] <= 'z')
					continue;
			}
			score = hgt * (comp ? 1.25f : 1) - y0 * 0.01f;
			if (score > head_score) {
				head_score = score;
				head_line = sp->line;
				head_company = comp;
				memcpy(head, row->text + s, e - s);
				head[e - s] = '\0';
			}
		}
	}
	/*
	 * OCR runs a letterhead into the text beside it ("Northwind Electric
	 * Aceun wanes"): the longest start of it printed elsewhere is the name.
	 */
	if (head[0] != '\0' && head_line >= 0 && respell(c, head, sizeof(head), head_line))
		head_seen = 1;
	if (head[0] != '\0' && head_line >= 0) {
		size_t ends[12], nw = 0, k2;
		int ocr = !(c->doc->lines[head_line].conf >= 0.999f);

		for (k2 = 1; head[k2 - 1] != '\0' && nw < 12; k2++)
			if (head[k2] == ' ' || head[k2] == '\0')
				ends[nw++] = k2;
		/* printed elsewhere as it stands, or the payment site's name */
		for (r = 0; r < c->nrows && nw > 0 && strlen(head) >= 4; r++) {
			int sg;

			for (sg = 0; sg < c->rows[r].nseg; sg++)
				if (c->rows[r].seg[sg].line == head_line)
					break;
			if (sg == c->rows[r].nseg && strcasestr(c->rows[r].text, head) != NULL) {
				head_seen = 1;
				nw = 0;
			}
		}
		if (nw > 0 && domain != NULL && domain[0] != '\0' && domain_eq(head, domain)) {
			head_seen = 1;
			nw = 0;
		}
		/* OCR debris after it: the start of two words or more that the
		 * payment site spells ("kantoenergyservice.example") */
		if (ocr && domain != NULL && domain[0] != '\0')
			for (k2 = nw; k2 > 1; k2--) {
				char pre[96];

				memcpy(pre, head, ends[k2 - 1]);
				pre[ends[k2 - 1]] = '\0';
				if (domain_eq(pre, domain)) {
					head[ends[k2 - 1]] = '\0';
					head_seen = 1;
					nw = 0;
					break;
				}
			}
		while (ocr && nw > 1) {
			char pre[96];
			int seen = 0;

			memcpy(pre, head, ends[nw - 1]);
			pre[ends[nw - 1]] = '\0';
			for (r = 0; r < c->nrows && !seen && strlen(pre) >= 4; r++) {
				int sg;

				for (sg = 0; sg < c->rows[r].nseg; sg++)
					if (c->rows[r].seg[sg].line == head_line)
						break;
				if (sg < c->rows[r].nseg)
					continue;
				if (strcasestr(c->rows[r].text, pre) != NULL)
					seen = 1;
			}
			if (seen && nw >= 2) {
				head[ends[nw - 1]] = '\0';
				head_seen = 1;
				break;
			}
			nw--;
		}
	}
	/* OCR may double the payable-to name or run the letterhead on: one
	 * that starts with the other agrees on the shorter */
	if (named[0] != '\0' && head[0] != '\0' && !name_eq(named, head)) {
		char a[96], b[96];

		squash(named, a, sizeof(a));
		squash(head, b, sizeof(b));
		if (strlen(b) >= 4 && strncmp(a, b, strlen(b)) == 0)
			snprintf(named, sizeof(named), "%s", head);
		else if (strlen(a) >= 4 && strncmp(b, a, strlen(a)) == 0)
			snprintf(head, sizeof(head), "%s", named);
	}
	if (named[0] != '\0' && (head[0] == '\0' || name_eq(named, head) ||
	    head_line < 0)) {
		snprintf(p->name, sizeof(p->name), "%s", named);
		/* the letterhead and the payable-to (or remit-to) name agree */
		p->conf = head[0] != '\0' ? (named_conf + 0.25f > 0.92f ? named_conf + 0.25f : 0.92f) :
		    named_conf;
		p->row = named_row >= 0 ? &c->rows[named_row] : NULL;
		p->start = named_start;
		p->end = named_end;
	} else if (head[0] != '\0') {
		const struct ex_line *l = &c->doc->lines[head_line];
		float conf = head_company || head_seen ? 0.82f : 0.72f;

		/* "Payable to" names another: the letterhead may be a brand */
		if (named[0] != '\0')
			conf = 0.5f;
		if (l->conf < 0.999f && isfinite(l->conf))
			conf *= l->conf >= 0.85f ? 0.98f : 0.8f;
		snprintf(p->name, sizeof(p->name), "%s", head);
		p->conf = conf;
		p->line = head_line;
	} else if (named[0] != '\0') {
		snprintf(p->name, sizeof(p->name), "%s", named);
		p->conf = named_conf;
		p->row = named_row >= 0 ? &c->rows[named_row] : NULL;
		p->start = named_start;
		p->end = named_end;
	}
	if (p->conf > 1)
		p->conf = 1;
}

/* ---- remit-to address ---- */

struct remit {
	int		 n;
	char		 lines[XF_ADDR_MAX][96];
	int		 row0, row1;
	float		 conf;
};

/*
 * "Make checks payable to ACME" with ACME's block in the column beside it
 * (a payment stub): the block from that name down.
 */
static void
remit_beside(struct ctx *c, struct remit *a)
{
	int r, h, sg, k;

	for (r = 0; r < c->nrows && a->n == 0; r++) {
		const struct row *row = &c->rows[r];

		for (h = 0; h < row->nhit && a->n == 0; h++) {
			size_t s = row->hit[h].end, e = segment_end(row, h);
			const struct row *prev = row;
			char name[96];
			float x0, lh = row->y1 - row->y0;

			if (row->hit[h].cls != C_PAYABLE)
				continue;
			while (s < e && (row->text[s] == ' ' || row->text[s] == ':'))
				s++;
			/* the name ends where its own line ends */
			for (sg = 0; sg < row->nseg; sg++)
				if (s >= row->seg[sg].off && s < row->seg[sg].off + row->seg[sg].len &&
				    e > row->seg[sg].off + row->seg[sg].len)
					e = row->seg[sg].off + row->seg[sg].len;
			if (e <= s || e - s >= sizeof(name))
				continue;
			memcpy(name, row->text + s, e - s);
			name[e - s] = '\0';
			for (sg = 0; sg < row->nseg; sg++) {
				char seg[96];

				if (row->seg[sg].off <= s || row->seg[sg].len >= sizeof(seg))
					continue;
				memcpy(seg, row->text + row->seg[sg].off, row->seg[sg].len);
				seg[row->seg[sg].len] = '\0';
				if (name_eq(seg, name))
					break;
			}
			if (sg == row->nseg)
				continue;
			x0 = finite_or(c->doc->lines[row->seg[sg].line].box.x0, 0);
			snprintf(a->lines[a->n++], sizeof(a->lines[0]), "%s", name);
			a->row0 = a->row1 = r;
			a->conf = 0.8f * row_trust(row);
			if (lh < 4)
				lh = 4;
			for (k = r + 1; k < c->nrows && a->n < XF_ADDR_MAX; k++) {
				const struct row *b = &c->rows[k];
				int s2;

				if (b->page != row->page || b->y0 - prev->y1 > 1.2f * lh)
					break;
				for (s2 = 0; s2 < b->nseg; s2++)
					if (fabsf(finite_or(c->doc->lines[b->seg[s2].line].box.x0, 0) - x0) <= 20)
						break;
				if (s2 == b->nseg)
					break;
				copy_text(a->lines[a->n++], sizeof(a->lines[0]), b->text + b->seg[s2].off,
				    b->seg[s2].len);
				a->row1 = k;
				prev = b;
			}
		}
	}
}

static void
pick_remit(struct ctx *c, struct remit *a)
{
	int r, h, k;

	memset(a, 0, sizeof(*a));
	a->row0 = -1;
	for (r = 0; r < c->nrows && a->n == 0; r++) {
		const struct row *row = &c->rows[r];

		for (h = 0; h < row->nhit && a->n == 0; h++) {
			size_t s = row->hit[h].end, e = segment_end(row, h);
			float x0 = finite_or(row_line_at(c, row, row->hit[h].start)->box.x0, 0);
			float lh = row->y1 - row->y0;
			const struct row *prev = row;

			if (row->hit[h].cls != C_REMIT)
				continue;
			if (lh < 4)
				lh = 4;
			while (s < e && (row->text[s] == ' ' || row->text[s] == ':'))
				s++;
			if (e > s) {
				copy_text(a->lines[a->n], sizeof(a->lines[0]), row->text + s, e - s);
				a->n++;
			}
			a->row0 = r;
			a->row1 = r;
			a->conf = row->hit[h].strength * 0.9f * row_trust(row);
			/* the block below: rows starting near the label's x, close together */
			for (k = r + 1; k < c->nrows && a->n < XF_ADDR_MAX; k++) {
				const struct row *b = &c->rows[k];
				float bx = b->x0, gap = b->y0 - prev->y1;
				int s2, j;
				size_t from = 0, to = b->len;

				if (b->page != row->page || gap > 1.2f * lh)
					break;
				/* the block may be one column of a wider row */
				for (s2 = 0; s2 < b->nseg; s2++) {
					const struct ex_line *l = &c->doc->lines[b->seg[s2].line];

					if (fabsf(finite_or(l->box.x0, 0) - x0) <= 30) {
						bx = finite_or(l->box.x0, 0);
						from = b->seg[s2].off;
						to = b->seg[s2].off + b->seg[s2].len;
						break;
					}
				}
				if (fabsf(bx - x0) > 30)
					break;
				for (j = 0; j < b->nhit; j++)
					if (b->hit[j].start >= from && b->hit[j].start < to &&
					    b->hit[j].cls != C_TRAP)
						break;
				if (j < b->nhit)
					break;
				copy_text(a->lines[a->n], sizeof(a->lines[0]), b->text + from, to - from);
				a->n++;
				a->row1 = k;
				prev = b;
			}
			if (a->n == 0)
				a->row0 = -1;
		}
	}
	if (a->n == 0)
		remit_beside(c, a);
	if (a->n == 0)
		a->row0 = -1;
}

/* ---- payment URL ---- */

struct url {
	char		 text[256];
	float		 conf;
	int		 row;
	size_t		 start, end;
};

static int
url_char(int ch)
{
	return is_alpha(ch) || is_digit(ch) || (ch != 0 && strchr("-._~:/?#[]@!$&'()*+,;=%", ch) != NULL);
}

static void
pick_url(struct ctx *c, struct url *u)
{
	int r;
	float best = 0;

	memset(u, 0, sizeof(*u));
	u->row = -1;
	for (r = 0; r < c->nrows; r++) {
		const struct row *row = &c->rows[r];
		size_t i;

		for (i = 0; i < row->len; i++) {
			const char *s = row->text + i;
			size_t rest = row->len - i, e, dot = 0, k, host_end;
			int scheme = 0, near_pay = 0, h;
			float score;
			char out[256];

			if (i > 0 && (url_char((unsigned char)s[-1]) && s[-1] != '(' && s[-1] != '\''))
				continue;
			if (rest > 8 && strncasecmp(s, "https://", 8) == 0)
				scheme = 8;
			else if (rest > 7 && strncasecmp(s, "http://", 7) == 0)
				scheme = 7;
			else if (!(rest > 4 && strncasecmp(s, "www.", 4) == 0))
				continue;
			for (e = scheme; e < rest && url_char((unsigned char)s[e]); e++)
				;
			while (e > (size_t)scheme && strchr(".,;:)]'!?", s[e - 1]) != NULL)
				e--;
			for (host_end = scheme; host_end < e && s[host_end] != '/' && s[host_end] != '?' &&
			    s[host_end] != '#'; host_end++)
				if (s[host_end] == '.')
					dot++;
			if (dot == 0 || host_end - scheme < 4 || e - scheme > 200 || s[scheme] == '.')
				continue;
			for (k = scheme; k < host_end; k++)
				if (!is_alpha((unsigned char)s[k]) && !is_digit((unsigned char)s[k]) &&
				    s[k] != '-' && s[k] != '.')
					break;
			if (k < host_end)
				continue;
			/* near "pay online", or "pay" in the URL or its row */
			for (h = 0; h < row->nhit; h++)
				if (row->hit[h].cls == C_PAYURL)
					near_pay = 1;
			if (r > 0 && c->rows[r - 1].page == row->page)
				for (h = 0; h < c->rows[r - 1].nhit; h++)
					if (c->rows[r - 1].hit[h].cls == C_PAYURL)
						near_pay = 1;
			score = 0.5f;
			if (near_pay)
				score = 0.9f;
			for (k = 0; k + 3 <= e; k++)
				if (strncasecmp(s + k, "pay", 3) == 0) {
					score += 0.15f;
					break;
				}
			if (scheme == 8)
				score += 0.05f;
			if (score > 1)
				score = 1;
			if (score <= best)
				continue;
			snprintf(out, sizeof(out), "https://%.*s", (int)(e - scheme), s + scheme);
			best = score;
			snprintf(u->text, sizeof(u->text), "%s", out);
			u->conf = scheme == 7 ? score * 0.9f : score;
			u->row = r;
			u->start = i;
			u->end = i + e;
			i += e;
		}
	}
}

/* ---- line items ---- */

struct item {
	char		 desc[96];
	long long	 minor;
	int		 frac;		/* printed with decimals */
	const char	*category;
	int		 row;
	size_t		 start, end;
};

struct items {
	int		 n;
	struct item	 it[XF_ITEMS_MAX];
	float		 conf;
};

static const char *
category_of(const char *desc, long long minor)
{
	static const struct { const char *word; const char *cat; } words[] = {
		{ "tax", "tax" }, { "vat", "tax" }, { "gst", "tax" }, { "hst", "tax" },
		{ "pst", "tax" }, { "levy", "tax" }, { "duty", "tax" }, { "mwst", "tax" },
		{ "tva", "tax" }, { "iva", "tax" }, { "btw", "tax" }, { "surcharge", "tax" },
		{ "adjustment", "adjustment" }, { "correction", "adjustment" },
		{ "credit", "credit" }, { "discount", "credit" }, { "rebate", "credit" },
		{ "refund", "credit" },
		{ "kwh", "usage" }, { "usage", "usage" }, { "consumption", "usage" },
		{ "therms", "usage" }, { "gallons", "usage" }, { "minutes", "usage" }, { " min", "usage" },
		{ "data", "usage" }, { "supply", "usage" }, { "delivery", "usage" },
		{ "transmission", "usage" }, { "roaming", "usage" }, { "calls", "usage" },
		{ "units", "usage" }, { "m3", "usage" },
		{ "fee", "fee" }, { "charge", "fee" }, { "rental", "fee" }, { "rent", "fee" },
		{ "connection", "fee" }, { "admin", "fee" }, { "standing", "fee" },
		{ "meter", "fee" }, { "subscription", "fee" }, { "plan", "fee" }, { "line", "fee" },
		{ "energy", "usage" }, { "electricity", "usage" }, { "water", "usage" },
		{ "gas", "usage" }, { "sewer", "usage" },
	};
	char low[96];
	size_t i, k, n = strlen(desc);

	for (i = 0; i < n && i < sizeof(low) - 1; i++)
		low[i] = (char)lower((unsigned char)desc[i]);
	low[i] = '\0';
	for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (strstr(low, words[k].word) != NULL)
			return words[k].cat;
	return minor < 0 ? "credit" : "other";
}

/*
 * Line items: the rows after the head of a table of charges (a charges
 * label without an amount, or a "Description" head) with a description
 * and one amount at the end, up to the row of a total or the charges'
 * sum. The first such table of the document.
 */
static void
pick_items(struct ctx *c, struct items *it)
{
	int r, h, k;
	float hx0, prev_y1;

	memset(it, 0, sizeof(*it));
	for (r = 0; r < c->nrows && it->n == 0; r++) {
		const struct row *row = &c->rows[r];
		struct xf_amount a;
		int head = 0;

		for (h = 0; h < row->nhit; h++)
			if (row->hit[h].cls == C_ITEMS || row->hit[h].cls == C_CHARGES)
				head = 1;
		if (!head || xf_amount_find(row->text, row->len, 0, c->style, c->exp, 0, row->ocr, &a))
			continue;
		hx0 = row->x0;
		prev_y1 = row->y1;
		for (k = r + 1; k < c->nrows && k < r + 1 + 2 * XF_ITEMS_MAX; k++) {
			const struct row *b = &c->rows[k];
			struct xf_amount last = { 0 }, cur;
			size_t from = 0, ds, de, limit = b->len;
			int found = 0, stop = 0, j, letters = 0;
			float lh = b->y1 - b->y0;
			struct item *t;

			/* a table runs on to the next page, not further, and has no gaps */
			if (b->page > row->page + 1 || (b->page == row->page && it->n > 0 &&
			    b->y0 - prev_y1 > 3 * (lh > 4 ? lh : 4)))
				break;
			/* a summary's label ends the table; in a column to the right it
			 * only ends this row's part of the table */
			for (j = 0; j < b->nhit && !stop; j++)
				if (b->hit[j].cls == C_TOTAL || b->hit[j].cls == C_CHARGES ||
				    b->hit[j].cls == C_SUBTOTAL || b->hit[j].cls == C_PREV ||
				    b->hit[j].cls == C_PAY || b->hit[j].cls == C_DUE ||
				    b->hit[j].cls == C_ACCOUNT || b->hit[j].cls == C_REMIT) {
					if (b->hit[j].start > 0 && row_x_at(c, b, b->hit[j].start) > hx0 + 150)
						limit = b->hit[j].start;
					else
						stop = 1;
				}
			if (stop)
				break;
			while (from < limit && xf_amount_find(b->text, limit, from, c->style, c->exp,
			    0, b->ocr, &cur)) {
				last = cur;
				found = 1;
				from = cur.end > from ? cur.end : from + 1;
			}
			if (!found)
				continue;
			if (b->page == row->page)
				prev_y1 = b->y1;
			ds = 0;
			de = last.start;
			while (de > ds && b->text[de - 1] == ' ')
				de--;
			for (j = 0; (size_t)j < de; j++)
				if (is_alpha((unsigned char)b->text[j]) || (unsigned char)b->text[j] >= 0xc0)
					letters++;
			if (letters < 2 || it->n >= XF_ITEMS_MAX)
				continue;
			t = &it->it[it->n++];
			copy_text(t->desc, sizeof(t->desc), b->text + ds, de - ds);
			t->minor = last.minor;
			t->frac = last.has_frac;
			t->category = category_of(t->desc, t->minor);
			t->row = k;
			t->start = 0;
			t->end = last.end;
		}
	}
	it->conf = it->n > 0 ? 0.7f : 0;
}

/*
 * Rows caught by the table's edges (a head read as an item, a note after
 * the last one) make the items miss their sum. When the whole list misses
 * the charges (or the total) but a run of it that drops at most two rows
 * at the start and any at the end meets them, that run is the table.
 * 0 the items meet target (now), -1 they do not.
 */
static int
items_fit(struct items *it, long long target, int exp)
{
	long long sum, unit = 1;
	int i0, k, best0 = -1, bestk = -1;

	for (i0 = 0, sum = 0; i0 < it->n; i0++)
		sum += it->it[i0].minor;
	if (it->n == 0 || sum == target)
		return 0;
	/* OCR lost one decimal point ("$3833" for "$38.33"): the sum says which */
	for (k = 0; k < exp; k++)
		unit *= 10;
	for (k = 0; unit > 1 && k < it->n; k++)
		if (!it->it[k].frac && it->it[k].minor % unit == 0 &&
		    sum - it->it[k].minor + it->it[k].minor / unit == target) {
			it->it[k].minor /= unit;
			return 0;
		}
	for (i0 = 0; i0 <= 2 && i0 < it->n; i0++) {
		sum = 0;
		for (k = i0; k < it->n; k++) {
			sum += it->it[k].minor;
			if (sum == target && (best0 < 0 || k - i0 > bestk - best0)) {
				best0 = i0;
				bestk = k;
			}
		}
	}
	if (best0 < 0 || bestk - best0 + 1 < 2)
		return -1;
	memmove(&it->it[0], &it->it[best0], sizeof(it->it[0]) * (size_t)(bestk - best0 + 1));
	it->n = bestk - best0 + 1;
	return 0;
}

/* ---- the draft ---- */

struct json_object *
ex_fields(const struct ex_doc *doc)
{
	struct ctx c;
	struct json_object *draft = NULL;
	struct field f;
	struct amounts *am = NULL;
	struct payee pay;
	struct remit rem;
	struct url url;
	struct items *items = NULL;
	char domain[64];
	size_t k;
	int r, h;

	memset(&c, 0, sizeof(c));
	c.doc = doc;
	c.nlines = doc != NULL && doc->lines != NULL ? doc->nlines : 0;
	if (c.nlines > XF_LINES_MAX)
		c.nlines = XF_LINES_MAX;
	if ((c.lw = calloc(NLABELS, sizeof(*c.lw))) == NULL)
		goto err;
	for (k = 0; k < NLABELS; k++) {
		const char *s = labels[k].words;

		while (*s != '\0' && c.lw[k].n < LABEL_WORDS_MAX) {
			size_t n = strcspn(s, " ");

			snprintf(c.lw[k].w[c.lw[k].n], XF_WORD_LEN, "%.*s", (int)n, s);
			c.lw[k].len[c.lw[k].n] = strlen(c.lw[k].w[c.lw[k].n]);
			if (c.lw[k].jlen + c.lw[k].len[c.lw[k].n] < XF_WORD_LEN) {
				memcpy(c.lw[k].joined + c.lw[k].jlen, c.lw[k].w[c.lw[k].n],
				    c.lw[k].len[c.lw[k].n]);
				c.lw[k].jlen += c.lw[k].len[c.lw[k].n];
			}
			c.lw[k].n++;
			s += n;
			while (*s == ' ')
				s++;
		}
	}
	if (build_rows(&c) != 0)
		goto err;
	doc_currency(&c);
	doc_style(&c);
	doc_order(&c);
	if ((draft = json_object_new_object()) == NULL ||
	    (am = calloc(1, sizeof(*am))) == NULL || (items = calloc(1, sizeof(*items))) == NULL)
		goto err;

	/* amounts */
	pick_amounts(&c, am);
	put_amount(&c, draft, "total_amount", &am->total, am->ti, am->tconf);
	put_amount(&c, draft, "previous_balance", &am->prev, am->pi, am->pconf);
	if (am->yi >= 0)
		am->pay.c[am->yi].minor = absll(am->pay.c[am->yi].minor);
	put_amount(&c, draft, "payments_received", &am->pay, am->yi, am->yconf);
	put_amount(&c, draft, "current_charges", &am->charges, am->ci, am->cconf);
	{
		/* the currency: the document's, seen beside the total when it can be */
		const struct row *cr = c.cur_row >= 0 ? &c.rows[c.cur_row] : NULL;
		float conf = c.cur_conf;

		if (am->ti >= 0 && am->total.c[am->ti].cur[0] != '\0') {
			cr = &c.rows[am->total.c[am->ti].row];
			if (strcmp(am->total.c[am->ti].cur, c.cur) == 0 ||
			    (strcmp(am->total.c[am->ti].cur, "$") == 0 && conf >= 0.8f))
				conf = conf < 0.95f ? 0.95f : conf;
		}
		if (cr == NULL && c.nrows > 0)
			cr = &c.rows[0];
		put_field(&c, draft, "currency", c.cur[0] != '\0' ? jstr(&c, c.cur) : NULL, conf,
		    cr, 0, cr != NULL ? cr->len : 0);
	}

	/* identifiers */
	memset(&f, 0, sizeof(f));
	collect(&c, C_ACCOUNT, V_IDENT, &f);
	put_simple(&c, draft, "account_number", V_IDENT, &f);
	memset(&f, 0, sizeof(f));
	collect(&c, C_BILLNO, V_IDENT, &f);
	put_simple(&c, draft, "bill_number", V_IDENT, &f);
	memset(&f, 0, sizeof(f));
	collect(&c, C_REF, V_IDENT, &f);
	put_simple(&c, draft, "reference_number", V_IDENT, &f);

	/* dates: "Amount due by 4 Dec" names the due date too */
	memset(&f, 0, sizeof(f));
	collect(&c, C_DUE, V_DATE, &f);
	for (r = 0; r < c.nrows; r++)
		for (h = 0; h < c.rows[r].nhit; h++) {
			const struct row *row = &c.rows[r];
			const struct hit *ht = &row->hit[h];
			struct cand v;
			size_t e = ht->end;

			if (ht->cls != C_TOTAL || ht->strength < 0.85f)
				continue;
			while (e < row->len && row->text[e] == ' ')
				e++;
			if (!(strncasecmp(row->text + e, "by ", 3) == 0 ||
			    strncasecmp(row->text + e, "on ", 3) == 0 ||
			    strncasecmp(row->text + e, "before ", 7) == 0))
				continue;
			memset(&v, 0, sizeof(v));
			if (!parse_value(&c, row, V_DATE, e, segment_end(row, h), &v))
				continue;
			v.row = r;
			v.page = row->page;
			v.score = 0.9f * row_trust(row);
			if (v.ambiguous && !c.order_known)
				v.score *= 0.85f;
			field_add(&f, &v);
		}
	put_simple(&c, draft, "due_date_iso", V_DATE, &f);
	memset(&f, 0, sizeof(f));
	collect(&c, C_STMT, V_DATE, &f);
	put_simple(&c, draft, "statement_date", V_DATE, &f);
	memset(&f, 0, sizeof(f));
	collect(&c, C_PERIOD, V_PERIOD, &f);
	put_simple(&c, draft, "service_period", V_PERIOD, &f);

	/* line items */
	pick_items(&c, items);
	if (am->ci >= 0 && items_fit(items, am->charges.c[am->ci].minor, c.exp) != 0 &&
	    am->balanced) {
		/*
		 * Items that miss the charges while the balance holds are rows
		 * misread (OCR, a table's edges), not a wrong total: left out for
		 * the reviewer to add, rather than failing a total the
		 * arithmetic confirms.
		 */
		items->n = 0;
	} else if (am->ci < 0 && am->ti >= 0 && am->pi < 0 && am->yi < 0)
		items_fit(items, am->total.c[am->ti].minor, c.exp);
	if (items->n > 0) {
		struct json_object *arr = json_object_new_array();
		int i;

		for (i = 0; i < items->n && arr != NULL; i++) {
			struct json_object *o = json_object_new_object();

			jset(&c, o, "description", jstr(&c, items->it[i].desc), 0);
			jset(&c, o, "amount", money_obj(&c, items->it[i].minor, c.cur), 0);
			jset(&c, o, "category", jstr(&c, items->it[i].category), 0);
			if (o == NULL || json_object_array_add(arr, o) != 0) {
				json_object_put(o);
				c.oom = 1;
			}
		}
		put_field(&c, draft, "line_items", arr, items->conf, &c.rows[items->it[0].row],
		    0, c.rows[items->it[0].row].len);
	} else
		put_field(&c, draft, "line_items", NULL, 0, NULL, 0, 0);

	/* remit-to address, payee, payment URL */
	pick_remit(&c, &rem);
	if (rem.n > 0) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
		char text[XF_ADDR_MAX * 98] = "";
		size_t o2 = 0;
		int i;

		for (i = 0; i < rem.n; i++) {
			if (arr != NULL && json_object_array_add(arr, jstr(&c, rem.lines[i])) != 0)
				c.oom = 1;
			o2 += (size_t)snprintf(text + o2, sizeof(text) - o2, "%s%s", i ? "\n" : "",
			    rem.lines[i]);
		}
		jset(&c, o, "lines", arr, 0);
		jset(&c, o, "text", jstr(&c, text), 0);
		put_field(&c, draft, "remit_to_address", o, rem.conf, &c.rows[rem.row0], 0,
		    c.rows[rem.row0].len);
	} else
		put_field(&c, draft, "remit_to_address", NULL, 0, NULL, 0, 0);
	pick_url(&c, &url);
	{
		/* the payment URL's host without "www." and its last label */
		const char *h0 = url.row >= 0 ? url.text + 8 : "";
		size_t n;

		if (strncasecmp(h0, "www.", 4) == 0)
			h0 += 4;
		n = strcspn(h0, "./?#:");
		snprintf(domain, sizeof(domain), "%.*s", (int)(n < sizeof(domain) ? n : 0), h0);
	}
	pick_payee(&c, &pay, rem.n > 0 ? rem.lines[0] : NULL, rem.row0, domain);
	if (pay.name[0] != '\0' && pay.row != NULL)
		put_field(&c, draft, "payee_name", jstr(&c, pay.name), pay.conf, pay.row,
		    pay.start, pay.end > pay.start ? pay.end : pay.row->len);
	else if (pay.name[0] != '\0' && pay.line >= 0) {
		/* a line of its own: its row, found by its segment */
		const struct row *pr = NULL;
		size_t s = 0, e = 0;

		for (r = 0; r < c.nrows && pr == NULL; r++)
			for (h = 0; h < c.rows[r].nseg; h++)
				if (c.rows[r].seg[h].line == pay.line) {
					pr = &c.rows[r];
					s = c.rows[r].seg[h].off;
					e = s + c.rows[r].seg[h].len;
				}
		put_field(&c, draft, "payee_name", jstr(&c, pay.name), pr != NULL ? pay.conf : 0, pr,
		    s, e);
	} else
		put_field(&c, draft, "payee_name", NULL, 0, NULL, 0, 0);
	put_field(&c, draft, "payment_url", url.row >= 0 ? jstr(&c, url.text) : NULL, url.conf,
	    url.row >= 0 ? &c.rows[url.row] : NULL, url.start, url.end);

	if (c.oom || xf_checks(draft, 1) != 0)
		goto err;
	free(items);
	free(am);
	free(c.rows);
	free(c.lw);
	return draft;
err:
	json_object_put(draft);
	free(items);
	free(am);
	free(c.rows);
	free(c.lw);
	return NULL;
}
