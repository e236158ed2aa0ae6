package gitcomment

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Comment marker prefixes, Flux's: pull requests on GitHub and Gitea,
// merge requests on GitLab.
const (
	prMarker = "flux-pr-comment-key"
	mrMarker = "flux-mr-comment-key"
)

// marker is the hidden line that names the comment of e's object for the
// Provider providerUID.
func marker(prefix, providerUID string, e events.Event) string {
	o := e.InvolvedObject
	return fmt.Sprintf("<!-- %s:%s/%s/%s/%s -->", prefix, providerUID, o.Kind, o.Namespace, o.Name)
}

// body is the comment Flux writes: the marker, a heading, the object with
// an emoji for the severity, the message and the metadata, sorted, without
// the change request's number.
func body(prefix, providerUID string, e events.Event) string {
	emoji := "ℹ️"
	if e.Severity == events.SeverityError {
		emoji = "⚠️"
	}
	o := e.InvolvedObject
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n## Flux Status\n\n%s %s/%s/%s\n\n%s\n\nMetadata:\n",
		marker(prefix, providerUID, e), emoji, o.Kind, o.Namespace, o.Name, e.Message)
	md := metadata(e)
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "* `%s`: %s\n", k, md[k])
	}
	return b.String()
}

// metadata is e's metadata as Flux's comment shows it: Flux's, without
// the change request's number.
func metadata(e events.Event) map[string]string {
	out := fluxMetadata(e)
	delete(out, changeRequestKey)
	return out
}

// fluxMetadata is e's metadata as Flux's event server hands it on: keys
// sent with the event.toolkit.fluxcd.io/ prefix lose it, and the bare keys
// win over them.
func fluxMetadata(e events.Event) map[string]string {
	if len(e.Metadata) == 0 {
		return nil
	}
	out := make(map[string]string, len(e.Metadata))
	for k, v := range e.Metadata {
		if key, ok := strings.CutPrefix(k, eventGroupPrefix); ok {
			out[key] = v
		}
	}
	for k, v := range e.Metadata {
		if !strings.HasPrefix(k, eventGroupPrefix) {
			out[k] = v
		}
	}
	return out
}
