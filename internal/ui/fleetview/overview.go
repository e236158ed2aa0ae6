package fleetview

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Filter selects objects as the overview and graph query strings do; an
// empty field selects everything.
type Filter struct {
	Namespace, Kind, State string
	// Q is a case-insensitive substring of the name.
	Q string
}

// matchesScope reports whether s passes the namespace, kind and name parts
// of the filter (the state part aside, which counts ignore).
func (f Filter) matchesScope(s Summary) bool {
	return (f.Namespace == "" || s.Namespace == f.Namespace) &&
		(f.Kind == "" || strings.EqualFold(s.Kind, f.Kind)) &&
		(f.Q == "" || strings.Contains(strings.ToLower(s.Name), strings.ToLower(f.Q)))
}

// Matches reports whether s passes every part of the filter.
func (f Filter) Matches(s Summary) bool {
	return f.matchesScope(s) && (f.State == "" || s.State == f.State)
}

// Count is one kind's line of the overview's counts.
type Count struct {
	Kind        string `json:"kind"`
	Total       int    `json:"total"`
	Ready       int    `json:"ready"`
	Failing     int    `json:"failing"`
	Waiting     int    `json:"waiting"`
	Stalled     int    `json:"stalled"`
	Reconciling int    `json:"reconciling"`
	Suspended   int    `json:"suspended"`
	Unknown     int    `json:"unknown"`
}

func (c *Count) add(state string) {
	c.Total++
	switch state {
	case StateReady:
		c.Ready++
	case StateFailing:
		c.Failing++
	case StateWaiting:
		c.Waiting++
	case StateStalled:
		c.Stalled++
	case StateReconciling:
		c.Reconciling++
	case StateSuspended:
		c.Suspended++
	default:
		c.Unknown++
	}
}

// Overview is the overview page.
type Overview struct {
	// Counts has one line per kind with at least one object in scope, in
	// `weir get all` order; it ignores the state filter, so that the
	// counts still show what the other states hold.
	Counts []Count `json:"counts"`
	// Attention lists the stalled objects, then the failing ones, each
	// group newest transition first.
	Attention []Summary `json:"attention"`
	// Suspended lists the suspended objects, with who and why.
	Suspended []Summary `json:"suspended"`
	// Objects is one page (Page) of the selected objects, attention
	// first, then by kind, namespace and name, unless sorted by a column.
	Objects []Summary `json:"objects"`
	// Total is how many objects the filter selects, on every page.
	Total int `json:"total"`
	// Offset and Limit say which rows of the whole table Objects holds.
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	// Namespaces are the namespaces of every object in scope, sorted.
	Namespaces []string `json:"namespaces"`
	// Skipped names the kinds left out and why (absent CRD, forbidden).
	Skipped map[string]string `json:"skipped,omitempty"`
	// Hidden are the kinds the user may not list in the scope asked for
	// (Fleet.Forbidden): the counts and the attention list leave them out.
	Hidden []string `json:"hidden,omitempty"`
}

// Summaries computes the Summary of every object, and the Sync of each
// Kustomization whose source's artifact is ahead of what it applied.
func Summaries(objs []unstructured.Unstructured) []Summary {
	idx := newIndex(objs)
	lookup := func(r Ref) *unstructured.Unstructured { return idx[r.String()] }
	out := make([]Summary, 0, len(objs))
	for i := range objs {
		out = append(out, SummaryOf(&objs[i], lookup))
	}
	return out
}

// SummaryOf is u's Summary with its Sync judged against the objects
// lookup finds (nil for an absent one): what the live stream sends, from
// its watches' caches.
func SummaryOf(u *unstructured.Unstructured, lookup func(Ref) *unstructured.Unstructured) Summary {
	s := Summarize(u)
	if s.Sync == "" {
		s.Sync = behind(u, lookup)
	}
	return s
}

// KustomizationSource is the source a Kustomization reads (its
// sourceRef); ok is false for any other kind or a malformed reference.
func KustomizationSource(u *unstructured.Unstructured) (Ref, bool) {
	if u.GetKind() != kinds.Kustomization.Kind {
		return Ref{}, false
	}
	k, ns, name, err := kinds.SourceRef(u)
	return Ref{Kind: k.Kind, Namespace: ns, Name: name}, err == nil
}

// ArtifactRevision is status.artifact.revision of u, "" for a nil u: a
// change of it changes the Sync of the Kustomizations reading u.
func ArtifactRevision(u *unstructured.Unstructured) string { return artifactRevision(u) }

// behind says a Kustomization's source is at a revision it has not
// applied yet ("source at <revision>"), "" otherwise.
func behind(u *unstructured.Unstructured, lookup func(Ref) *unstructured.Unstructured) string {
	src, ok := KustomizationSource(u)
	if !ok {
		return ""
	}
	need := artifactRevision(lookup(src))
	applied, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	if need == "" || applied == "" || need == applied {
		return ""
	}
	return "source at " + need
}

// NewOverview computes the overview of the summaries f selects.
func NewOverview(all []Summary, f Filter) Overview {
	o := Overview{Counts: []Count{}, Attention: []Summary{}, Suspended: []Summary{}, Objects: []Summary{}}
	counts := map[string]*Count{}
	namespaces := map[string]bool{}
	for _, s := range all {
		if !f.matchesScope(s) {
			continue
		}
		namespaces[s.Namespace] = true
		c := counts[s.Kind]
		if c == nil {
			c = &Count{Kind: s.Kind}
			counts[s.Kind] = c
		}
		c.add(s.State)
		if !f.Matches(s) {
			continue
		}
		o.Objects = append(o.Objects, s)
		switch s.State {
		case StateStalled, StateFailing:
			o.Attention = append(o.Attention, s)
		case StateSuspended:
			o.Suspended = append(o.Suspended, s)
		}
	}
	for _, k := range kinds.All {
		if c := counts[k.Kind]; c != nil {
			o.Counts = append(o.Counts, *c)
		}
	}
	o.Namespaces = slices.Sorted(maps.Keys(namespaces))
	o.Total = len(o.Objects)
	slices.SortStableFunc(o.Attention, compareAttention)
	slices.SortStableFunc(o.Suspended, compareNames)
	slices.SortStableFunc(o.Objects, func(a, b Summary) int {
		if c := cmp.Compare(attentionRank(a), attentionRank(b)); c != 0 {
			return c
		}
		if attentionRank(a) < 2 {
			return compareAttention(a, b)
		}
		return compareNames(a, b)
	})
	return o
}

// attentionRank orders stalled (0) before failing (1) before the rest (2).
func attentionRank(s Summary) int {
	switch s.State {
	case StateStalled:
		return 0
	case StateFailing:
		return 1
	}
	return 2
}

// compareAttention sorts stalled before failing, then newest transition
// first (RFC 3339 in UTC sorts as text), then by name.
func compareAttention(a, b Summary) int {
	if c := cmp.Compare(attentionRank(a), attentionRank(b)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.LastTransition, a.LastTransition); c != 0 {
		return c
	}
	return compareNames(a, b)
}

// kindRank is a kind's place in `weir get all` order; unknown kinds last.
func kindRank(kind string) int {
	for i, k := range kinds.All {
		if k.Kind == kind {
			return i
		}
	}
	return len(kinds.All)
}

func compareNames(a, b Summary) int {
	return cmp.Or(cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
