package objectstate

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastRunPaths are the times a controller writes when it reconciles an
// object, the latest of which is its last run: the handled reconcile
// request, a Kustomization's newest history entry, a HelmRelease's newest
// deploy, a source's artifact.
var lastRunPaths = [][]string{
	{"status", "lastHandledReconcileAt"},
	{"status", "history", "0", "lastReconciled"},
	{"status", "history", "0", "lastDeployed"},
	{"status", "artifact", "lastUpdateTime"},
}

// Schedule sets s.LastRun and s.Interval, from which the page tells the
// next run (s.LastRun plus whole intervals, the first still ahead): the
// latest of the Ready condition's last transition and lastRunPaths, and
// spec.interval. An object without an interval, or never run, has none.
func Schedule(u *unstructured.Unstructured, s *Summary) {
	raw, _, _ := unstructured.NestedString(u.Object, "spec", "interval")
	every, err := time.ParseDuration(raw)
	if err != nil || every <= 0 {
		return
	}
	var last time.Time
	if t, err := time.Parse(time.RFC3339, s.LastTransition); err == nil {
		last = t
	}
	for _, p := range lastRunPaths {
		if t := timeAt(u.Object, p); t.After(last) {
			last = t
		}
	}
	if last.IsZero() {
		return
	}
	s.LastRun = last.UTC().Format(time.RFC3339)
	s.Interval = int64(every / time.Second)
}

// timeAt reads an RFC 3339 time at path, where a number in the path
// indexes a list; the zero time when there is none.
func timeAt(obj map[string]any, path []string) time.Time {
	var cur any = obj
	for _, p := range path {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[p]
		case []any:
			if p != "0" || len(v) == 0 {
				return time.Time{}
			}
			cur = v[0]
		default:
			return time.Time{}
		}
	}
	str, _ := cur.(string)
	t, err := time.Parse(time.RFC3339Nano, str)
	if err != nil {
		return time.Time{}
	}
	return t
}
