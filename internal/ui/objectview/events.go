package objectview

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event is one core/v1 Event about the object, times in RFC 3339.
type Event struct {
	Type      string `json:"type"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Count     int32  `json:"count"`
	FirstTime string `json:"firstTime"`
	LastTime  string `json:"lastTime"`
	// Source is the component that reported it (kustomize-controller).
	Source string `json:"source"`
}

// Events lists the core/v1 Events whose involvedObject is the object ref
// names, newest first (by last occurrence). The object need not exist.
func Events(ctx context.Context, c client.Client, ref Ref) ([]Event, error) {
	k, err := resolve(ref)
	if err != nil {
		return nil, err
	}
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ref.Namespace), client.MatchingFields{
		"involvedObject.kind": k.Kind, "involvedObject.name": ref.Name, "involvedObject.namespace": ref.Namespace,
	}); err != nil {
		return nil, fmt.Errorf("listing the events of %s: %w", ref, err)
	}
	type timed struct {
		Event
		last time.Time
	}
	all := make([]timed, 0, len(list.Items))
	for _, e := range list.Items {
		if e.InvolvedObject.APIVersion != "" && e.InvolvedObject.APIVersion != k.GroupVersion.String() &&
			groupOf(e.InvolvedObject.APIVersion) != k.GroupVersion.Group {
			continue // a kind of the same name in another group
		}
		_, last := eventTimes(&e)
		all = append(all, timed{Event: EventOf(&e), last: last})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].last.After(all[j].last) })
	out := make([]Event, len(all))
	for i, e := range all {
		out[i] = e.Event
	}
	return out, nil
}

// EventOf is e in the page's shape, as the page lists it and the UI's
// stream sends it: the first and last occurrences (eventTimes), a count
// of at least 1, the component that reported it.
func EventOf(e *corev1.Event) Event {
	first, last := eventTimes(e)
	return Event{
		Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1),
		FirstTime: rfc3339(first), LastTime: rfc3339(last), Source: eventSource(e),
	}
}

func groupOf(apiVersion string) string {
	for i := range len(apiVersion) {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// eventTimes are an Event's first and last occurrences: the legacy
// timestamps, else eventTime and the series' last observation.
func eventTimes(e *corev1.Event) (first, last time.Time) {
	first, last = e.FirstTimestamp.Time, e.LastTimestamp.Time
	if first.IsZero() {
		first = e.EventTime.Time
	}
	if last.IsZero() && e.Series != nil {
		last = e.Series.LastObservedTime.Time
	}
	if last.IsZero() {
		last = first
	}
	if first.IsZero() {
		first = e.CreationTimestamp.Time
		last = first
	}
	return first, last
}

func eventSource(e *corev1.Event) string {
	if e.Source.Component != "" {
		return e.Source.Component
	}
	return e.ReportingController
}
