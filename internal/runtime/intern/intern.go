package intern

import (
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Bounds of the table: strings longer than maxLen are rarely shared
// (messages that name objects, errors), and a table that reaches
// maxEntries starts again from empty, so that the strings of old
// revisions and messages are not held forever. Objects keep the copies
// they were given either way.
const (
	maxLen     = 256
	maxEntries = 8192
)

// Table is a bounded set of canonical strings. The zero value is ready to
// use.
type Table struct {
	mu sync.Mutex
	m  map[string]string
}

// Default is the process's table.
var Default = &Table{}

// String returns the canonical copy of s: the first one the table saw
// since it last started again.
func (t *Table) String(s string) string {
	if s == "" || len(s) > maxLen {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m[s]; ok {
		return c
	}
	if t.m == nil || len(t.m) >= maxEntries {
		t.m = make(map[string]string, 64)
	}
	// A copy of its own: s may share the memory of a larger buffer that
	// the table must not keep alive.
	c := strings.Clone(s)
	t.m[c] = c
	return c
}

// Strings replaces each of ss by its canonical copy.
func (t *Table) Strings(ss []string) {
	for i := range ss {
		ss[i] = t.String(ss[i])
	}
}

// Len is how many strings the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// ObjectMeta interns what objects of a fleet share in their metadata: the
// namespace, the finalizers, the generate name and the label values (keys
// are the map's own; a map is not shared). Annotations are left alone:
// kubectl's last-applied-configuration of a Secret holds its data, which
// must not outlive the Secret in a table.
func (t *Table) ObjectMeta(m *metav1.ObjectMeta) {
	m.Namespace = t.String(m.Namespace)
	m.GenerateName = t.String(m.GenerateName)
	t.Strings(m.Finalizers)
	for k, v := range m.Labels {
		m.Labels[k] = t.String(v)
	}
}

// Conditions interns the type, status, reason and message of each
// condition.
func (t *Table) Conditions(conds []metav1.Condition) {
	for i := range conds {
		c := &conds[i]
		c.Type, c.Reason, c.Message = t.String(c.Type), t.String(c.Reason), t.String(c.Message)
		c.Status = metav1.ConditionStatus(t.String(string(c.Status)))
	}
}

// History interns what a fleet's snapshots share: the Ready reason and
// the metadata values (the revision).
func (t *Table) History(h meta.History) {
	for i := range h {
		s := &h[i]
		s.LastReconciledStatus = t.String(s.LastReconciledStatus)
		for k, v := range s.Metadata {
			s.Metadata[k] = t.String(v)
		}
	}
}
