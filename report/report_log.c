/*
 * report_log.c - the transparency log section of an audit page: the
 * checkpoint a format 4 file carries (audit-evidence/v4,
 * predicate.log), its signers and what verify found of them, and the
 * result of the audit record's inclusion proof.  Nothing is checked
 * here: the caller says what verify found (report_source.log).
 */
#include <stdio.h>
#include <string.h>

#include "evidence/checkpoint.h"
#include "evidence/evidence.h"
#include "report/report_priv.h"

void
report_log_section(struct rd *r, const struct report_source *src,
		   struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *log = rd_at(r, p, "log", RD_OBJ, 0);
	const struct rba_json_value *text, *proof;
	const struct evidence_log_summary *ls = src->verified ? src->log : NULL;
	struct checkpoint c;
	char hash[16];
	double index;

	if (log == NULL)
		return;
	text = rd_str(r, log, "checkpoint");
	proof = rd_at(r, log, "proof", RD_ARR, 1);
	index = rd_num(r, log, "index");
	if (r->json.err)
		return;
	rba_buf_printf(b, "<h2>Transparency log</h2>\n<p>At export the store's "
			  "history was a Merkle tree of ");
	html_num(b, rd_num(r, log, "tree_size"));
	rba_buf_printf(b, " records (RFC 6962), signed as this checkpoint "
			  "(C2SP tlog-checkpoint), which anyone keeping it can hold "
			  "the store's later history to:</p>\n<pre class=\"mono\" "
			  "id=\"checkpoint\" style=\"white-space: pre-wrap; "
			  "word-break: break-all\">");
	/* Line by line: a newline of the note is a line of the page, any
	 * other control character shown as text. */
	for (size_t at = 0; at < text->len;) {
		const char *nl = memchr(text->str + at, '\n', text->len - at);
		size_t len = nl != NULL ? (size_t)(nl - text->str) - at : text->len - at;
		html_text(b, text->str + at, len);
		if (nl != NULL)
			rba_buf_put_u8(b, '\n');
		at += len + (nl != NULL);
	}
	rba_buf_printf(b, "</pre>\n");
	if (checkpoint_parse(text->str, text->len, &c, NULL) == 0) {
		rba_buf_printf(b, "<table id=\"log-signers\"><tr><th>signer</th>"
				  "<th>key hash</th><th>signature</th></tr>\n");
		for (size_t i = 0; i < c.note.nsigs; i++) {
			const struct note_sig *s = &c.note.sigs[i];
			int ours = ls != NULL && i < EVIDENCE_LOG_SIGNERS_MAX &&
				   ls->signers[i].by_signer;
			rba_buf_printf(b, "<tr><td class=\"mono\">");
			html_text(b, s->name, s->name_len);
			snprintf(hash, sizeof(hash), "%08x", (unsigned)s->hash);
			rba_buf_printf(b, "</td><td class=\"mono\">%s</td><td>%s</td></tr>\n",
				       hash,
				       ours ? "verified: the key that signed this file"
				       : ls != NULL ? "not checked here (rebuild-audit "
						      "verify --vkey checks a witness)"
						    : "not verified");
		}
		rba_buf_printf(b, "</table>\n");
		checkpoint_release(&c);
	}
	rba_buf_printf(b, "<p id=\"log-proof\">Audit record ");
	html_count(b, index + 1);
	rba_buf_printf(b, " is leaf ");
	html_count(b, index);
	rba_buf_printf(b, " of that tree; its inclusion proof has %zu hash%s: ",
		       proof->n, proof->n == 1 ? "" : "es");
	rba_buf_printf(b, "%s</p>\n",
		       ls != NULL && ls->proof_holds
			       ? "it checks against the checkpoint's root, so this "
				 "record is the one the signed tree holds"
			       : "not checked (the file was not verified)");
}
