package eventserver

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// errInvalidEvent marks an event the server refuses with 400.
var errInvalidEvent = errors.New("invalid event")

// validateEvent checks the fields an Alert needs to select the event.
func validateEvent(e *events.Event) error {
	var missing []string
	if e.InvolvedObject.Kind == "" {
		missing = append(missing, "involvedObject.kind")
	}
	if e.InvolvedObject.Name == "" {
		missing = append(missing, "involvedObject.name")
	}
	if e.InvolvedObject.Namespace == "" {
		missing = append(missing, "involvedObject.namespace")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %s", errInvalidEvent, strings.Join(missing, ", "))
	}
	switch e.Severity {
	case events.SeverityInfo, events.SeverityError, events.SeverityTrace:
		return nil
	default:
		return fmt.Errorf("%w: severity %q is not one of info, error, trace", errInvalidEvent, e.Severity)
	}
}

// rateLimitKey identifies duplicates of an event. Flux documents the key
// as the involved object's kind, namespace and name, the message and the
// metadata; weir adds the severity and reason so that an error never hides
// behind an info event worded alike.
func rateLimitKey(e *events.Event) string {
	var b strings.Builder
	o := e.InvolvedObject
	for _, s := range []string{o.Kind, o.Namespace, o.Name, e.Severity, e.Reason, e.Message} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(e.Metadata[k])
		b.WriteByte(0)
	}
	return b.String()
}

// withAlertMetadata returns a copy of e carrying the Alert's summary and
// eventMetadata, and the eventMetadata keys it ignored. The event's own
// keys win, as Flux documents: an Alert adds context, it never rewrites
// what the controller reported.
func withAlertMetadata(e events.Event, summary string, extra map[string]string) (events.Event, []string) {
	if summary == "" && len(extra) == 0 {
		return e, nil
	}
	md := make(map[string]string, len(e.Metadata)+len(extra)+1)
	if summary != "" {
		md["summary"] = summary
	}
	var ignored []string
	for k, v := range extra {
		if _, ok := e.Metadata[k]; ok {
			ignored = append(ignored, k)
			continue
		}
		md[k] = v
	}
	for k, v := range e.Metadata {
		md[k] = v
	}
	sort.Strings(ignored)
	e.Metadata = md
	return e, ignored
}

// Metadata keys dropped before matching: they change on every
// reconcile without telling a person anything, and would defeat the rate
// limit.
var droppedMetadata = map[string]bool{"checksum": true, "digest": true}

// normalizeMetadata returns e's metadata in the form Alerts and Providers
// see. Controllers built on Flux's runtime prefix keys with the involved
// object's API group ("source.toolkit.fluxcd.io/revision"); weir's send
// them bare. Both arrive here as "revision".
func normalizeMetadata(e *events.Event) map[string]string {
	if len(e.Metadata) == 0 {
		return nil
	}
	prefix := ""
	if gv, err := schema.ParseGroupVersion(e.InvolvedObject.APIVersion); err == nil && gv.Group != "" {
		prefix = gv.Group + "/"
	}
	out := make(map[string]string, len(e.Metadata))
	for k, v := range e.Metadata {
		if prefix != "" {
			k = strings.TrimPrefix(k, prefix)
		}
		if k == "" || droppedMetadata[k] {
			continue
		}
		out[k] = v
	}
	return out
}
