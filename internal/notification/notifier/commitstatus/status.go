package commitstatus

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// progressingReason is Flux's reason for a reconciliation under way.
const progressingReason = "Progressing"

// commitStatusKey and commitStatusUpdate mark the event Flux's
// controllers send when a reconciliation ends well: the one info event
// that sets a commit status.
const (
	commitStatusKey    = "commit_status"
	commitStatusUpdate = "update"
)

// maxDescription bounds a status description: GitHub refuses more than
// 140 characters, and the description comes from the event's reason.
const maxDescription = 140

// Wants reports whether e may set a commit status, as Flux decides before
// any host is asked: an error event, the end of a reconciliation
// (commit_status: update), or an event naming its commit. Progressing
// events are skipped by every host.
func Wants(e events.Event) bool {
	if e.Reason == progressingReason {
		return false
	}
	if e.Severity == events.SeverityError || e.Metadata[commitStatusKey] == commitStatusUpdate {
		return true
	}
	_, ok := e.Metadata["event.toolkit.fluxcd.io/commit"]
	if !ok {
		_, ok = e.Metadata["commit"]
	}
	return ok
}

// failed reports whether the status to set is a failure.
func failed(e events.Event) bool { return e.Severity == events.SeverityError }

// Description is the status description Flux writes: the event's reason
// split into lower-case words ("ReconciliationSucceeded" becomes
// "reconciliation succeeded"), at most maxDescription characters.
func Description(e events.Event) string {
	return truncate(strings.ToLower(splitWords(e.Reason)), maxDescription)
}

// splitWords puts a space where a CamelCase identifier starts a word: at a
// lower-case letter or digit followed by an upper-case one, and before the
// last capital of an acronym followed by a lower-case letter ("HTTPError"
// becomes "HTTP Error").
func splitWords(s string) string {
	if !utf8.ValidString(s) {
		return s
	}
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(c)
	}
	return b.String()
}

// DefaultKey is Flux's status key when commitStatusExpr is not set:
// "<kind>/<name>/<first group of the Provider's UID>", lower-case, so that
// two clusters reporting on one commit keep apart.
func DefaultKey(kind, name, providerUID string) string {
	uid, _, _ := strings.Cut(providerUID, "-")
	return strings.ToLower(kind + "/" + name + "/" + uid)
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
