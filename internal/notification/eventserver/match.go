package eventserver

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// anyName selects every object of a kind in an eventSources entry, and
// every namespace in its namespace field.
const anyName = "*"

// labelReader returns the labels of the event's involved object. It is
// called only when an eventSources entry carries matchLabels.
type labelReader func() (map[string]string, error)

// selection is the verdict on one Alert for one event: whether it selects
// the event, and why not, for the debug log.
type selection struct {
	selected bool
	reason   string
}

// selects decides whether alert forwards the event. Problems that concern
// a single entry (a bad regex, an unreadable object, a refused
// cross-namespace reference) are returned in errs and that entry is
// skipped; the other entries still count.
func selects(alert *notificationv1beta3.Alert, e *events.Event, noCross bool, readLabels labelReader) (selection, []error) {
	if alert.Spec.Suspend {
		return selection{reason: "alert is suspended"}, nil
	}
	if !severityWanted(alert.Spec.EventSeverity, e.Severity) {
		return selection{reason: "severity not wanted"}, nil
	}
	var errs []error
	matched := false
	for i, src := range alert.Spec.EventSources {
		ok, err := sourceSelects(src, alert.Namespace, e.InvolvedObject, noCross, readLabels)
		if err != nil {
			errs = append(errs, fmt.Errorf("eventSources[%d]: %w", i, err))
		}
		if ok {
			matched = true
			break
		}
	}
	if !matched {
		return selection{reason: "no event source matches"}, errs
	}
	ok, regexErrs := messagePasses(alert.Spec.InclusionList, alert.Spec.ExclusionList, e.Message)
	errs = append(errs, regexErrs...)
	if !ok {
		return selection{reason: "message filtered out"}, errs
	}
	return selection{selected: true}, errs
}

// severityWanted: an "info" Alert (the default) takes info and error
// events, an "error" Alert only error events. Trace events never reach
// this point.
func severityWanted(alertSeverity, eventSeverity string) bool {
	switch alertSeverity {
	case notificationv1beta3.EventSeverityError:
		return eventSeverity == events.SeverityError
	default:
		return eventSeverity == events.SeverityInfo || eventSeverity == events.SeverityError
	}
}

// sourceSelects matches one eventSources entry against the involved
// object. The entry's namespace defaults to the Alert's; any other
// namespace, "*" included, is a cross-namespace reference.
func sourceSelects(src notificationv1.CrossNamespaceObjectReference, alertNS string, obj corev1.ObjectReference,
	noCross bool, readLabels labelReader) (bool, error) {
	ns := src.Namespace
	if ns == "" {
		ns = alertNS
	}
	if noCross && ns != alertNS {
		return false, fmt.Errorf("cross-namespace reference to %q refused: --no-cross-namespace-refs is set", ns)
	}
	if ns != anyName && ns != obj.Namespace {
		return false, nil
	}
	if !strings.EqualFold(src.Kind, obj.Kind) {
		return false, nil
	}
	if src.Name != anyName && src.Name != obj.Name {
		return false, nil
	}
	// As in Flux, matchLabels narrow a named entry too.
	if len(src.MatchLabels) == 0 {
		return true, nil
	}
	objLabels, err := readLabels()
	if err != nil {
		return false, fmt.Errorf("reading labels of %s/%s/%s: %w", obj.Kind, obj.Namespace, obj.Name, err)
	}
	return labels.SelectorFromSet(src.MatchLabels).Matches(labels.Set(objLabels)), nil
}

// messagePasses applies the inclusion list (when set, one regex must
// match) and then the exclusion list (no regex may match). A regex that
// does not compile is reported and ignored.
func messagePasses(inclusion, exclusion []string, message string) (bool, []error) {
	var errs []error
	if len(inclusion) > 0 {
		included := false
		for _, expr := range inclusion {
			re, err := regexp.Compile(expr)
			if err != nil {
				errs = append(errs, fmt.Errorf("inclusionList: %w", err))
				continue
			}
			if re.MatchString(message) {
				included = true
				break
			}
		}
		if !included {
			return false, errs
		}
	}
	for _, expr := range exclusion {
		re, err := regexp.Compile(expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("exclusionList: %w", err))
			continue
		}
		if re.MatchString(message) {
			return false, errs
		}
	}
	return true, errs
}
