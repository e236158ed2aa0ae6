package eventserver

import (
	"errors"
	"fmt"
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

// rateLimitKey identifies duplicates of an event. Flux's key is the
// involved object's kind, namespace and name, the message, and the
// controller's revision, originRevision and token metadata; weir adds the
// severity and reason so that an error never hides behind an info event
// worded alike.
func rateLimitKey(e *events.Event, md eventMetadata) string {
	var b strings.Builder
	o := e.InvolvedObject
	for _, s := range []string{o.Kind, o.Namespace, o.Name, e.Severity, e.Reason, e.Message} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	for _, k := range []string{"originRevision", "revision", tokenKey} {
		if v, ok := md.controller[k]; ok {
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(v)
			b.WriteByte(0)
		}
	}
	return b.String()
}

// eventGroupPrefix marks the keys a Flux controller copies from the
// object's event.toolkit.fluxcd.io/ annotations (RFC-0008).
const eventGroupPrefix = "event.toolkit.fluxcd.io/"

// Metadata keys with a meaning to the server, as the controller sends
// them (Flux's names).
const (
	tokenKey            = "token"
	commitStatusMetaKey = "commit_status"
	commitStatusUpdate  = "update"
)

// droppedMetadata are the controller's keys dropped before matching, as
// Flux drops them: they change on every reconcile without telling a person
// anything.
var droppedMetadata = []string{"checksum", "digest"}

// eventMetadata is an event's metadata split by where it came from, the
// prefixes removed: controller holds the controller's own keys (Flux's
// prefixed with the involved object's API group, weir's sent bare),
// annotations the keys copied from the object's event.toolkit.fluxcd.io/
// annotations.
type eventMetadata struct {
	controller  map[string]string
	annotations map[string]string
}

// splitMetadata sorts e's metadata as Flux's event server does: keys under
// the involved object's group or event.toolkit.fluxcd.io/ are kept
// without their prefix, the controller's checksum and digest dropped (any
// case), other prefixed keys dropped. Keys without a "/" are weir's
// controllers' form of the group's keys (a prefixed key wins over its
// bare twin). The controller's token is kept for the rate-limit key only:
// internalMetadata removes it before any Alert sees the event.
func splitMetadata(e *events.Event) eventMetadata {
	var md eventMetadata
	if len(e.Metadata) == 0 {
		return md
	}
	prefix := ""
	if gv, err := schema.ParseGroupVersion(e.InvolvedObject.APIVersion); err == nil && gv.Group != "" {
		prefix = gv.Group + "/"
	}
	md.controller = map[string]string{}
	prefixed := map[string]bool{}
	for k, v := range e.Metadata {
		if key, ok := strings.CutPrefix(k, eventGroupPrefix); ok {
			if key != "" {
				if md.annotations == nil {
					md.annotations = map[string]string{}
				}
				md.annotations[key] = v
			}
			continue
		}
		key, isPrefixed := k, false
		if prefix != "" {
			key, isPrefixed = strings.CutPrefix(k, prefix)
		}
		if key == "" || (!isPrefixed && strings.Contains(key, "/")) || dropped(key) {
			continue
		}
		if !isPrefixed && prefixed[key] {
			continue
		}
		md.controller[key] = v
		if isPrefixed {
			prefixed[key] = true
		}
	}
	return md
}

func dropped(key string) bool {
	for _, d := range droppedMetadata {
		if strings.EqualFold(key, d) {
			return true
		}
	}
	return false
}

// withoutInternal returns md without the keys no Alert sees: the
// controller's token.
func (md eventMetadata) withoutInternal() eventMetadata {
	if _, ok := md.controller[tokenKey]; !ok {
		return md
	}
	c := make(map[string]string, len(md.controller))
	for k, v := range md.controller {
		if k != tokenKey {
			c[k] = v
		}
	}
	md.controller = c
	return md
}

// commitStatusUpdate reports whether the controller marked the event as
// the one that sets a commit status (commit_status: update): Flux hands
// it to the commit-status types only.
func (md eventMetadata) commitStatusUpdate() bool {
	return md.controller[commitStatusMetaKey] == commitStatusUpdate
}

// Metadata sources, named as Flux names them in its MetadataAppendFailed
// Event.
const (
	sourceAnnotations   = "involved object annotations"
	sourceEventMetadata = "Alert object .spec.eventMetadata"
	sourceSummary       = "Alert object .spec.summary"
	sourceController    = "involved object controller metadata"
)

// merged is the metadata one Alert forwards, and, for each key whose value
// an earlier source set and a later one replaced, the sources that set it
// (lowest first, comma-separated). From lowest to highest precedence, as
// Flux's RFC-0008 orders them: the object's annotations, the Alert's
// eventMetadata, its summary, the controller's keys. An Alert adds
// context; it never rewrites what the controller reported.
func (md eventMetadata) merged(summary string, extra map[string]string) (map[string]string, map[string]string) {
	out := map[string]string{}
	from := map[string][]string{}
	set := func(source, k, v string) {
		out[k] = v
		from[k] = append(from[k], source)
	}
	for k, v := range md.annotations {
		set(sourceAnnotations, k, v)
	}
	for k, v := range extra {
		set(sourceEventMetadata, k, v)
	}
	if summary != "" {
		set(sourceSummary, "summary", summary)
	}
	for k, v := range md.controller {
		set(sourceController, k, v)
	}
	if len(out) == 0 {
		return nil, nil
	}
	var conflicts map[string]string
	for k, sources := range from {
		if len(sources) > 1 {
			if conflicts == nil {
				conflicts = map[string]string{}
			}
			conflicts[k] = strings.Join(sources, ", ")
		}
	}
	return out, conflicts
}
