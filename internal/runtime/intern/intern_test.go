package intern

import (
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// same reports whether a and b are one copy in memory.
func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// fresh returns a copy of s in memory of its own, as a decoder makes it.
func fresh(s string) string { return strings.Clone(s) }

func TestStringSharesEqualStrings(t *testing.T) {
	var tab Table
	a := tab.String(fresh("Ready"))
	b := tab.String(fresh("Ready"))
	if a != "Ready" || !same(a, b) {
		t.Errorf("two interned copies of %q are not one", a)
	}
	if c := tab.String(fresh("Healthy")); same(a, c) || c != "Healthy" {
		t.Errorf("different strings share memory or changed: %q", c)
	}
}

func TestStringBounds(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    string
		held bool
	}{
		{"empty", "", false},
		{"short", "main@sha1:0123456789abcdef0123456789abcdef01234567", true},
		{"at the limit", strings.Repeat("x", maxLen), true},
		{"too long", strings.Repeat("x", maxLen+1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tab Table
			in := fresh(tt.s)
			if got := tab.String(in); got != tt.s {
				t.Fatalf("String changed the value: %q", got)
			}
			if held := tab.Len() == 1; held != tt.held {
				t.Errorf("held = %v, want %v", held, tt.held)
			}
		})
	}
}

// The table starts again when full: its size stays bounded, and strings
// handed out before keep their value.
func TestTableStartsAgainWhenFull(t *testing.T) {
	var tab Table
	first := tab.String(fresh("first"))
	for i := range maxEntries {
		tab.String(strings.Repeat("y", i%maxLen+1) + string(rune('a'+i/maxLen)))
	}
	if n := tab.Len(); n > maxEntries {
		t.Fatalf("table holds %d strings, more than %d", n, maxEntries)
	}
	if first != "first" {
		t.Errorf("a string handed out changed: %q", first)
	}
	again := tab.String(fresh("first"))
	if again != "first" || tab.Len() > maxEntries {
		t.Errorf("after a restart: %q, %d held", again, tab.Len())
	}
}

// The copy the table keeps is its own: it does not hold a larger buffer
// the string was cut from.
func TestStringKeepsACopyOfItsOwn(t *testing.T) {
	var tab Table
	buf := []byte("xxReadyxx")
	cut := unsafe.String(&buf[2], 5)
	got := tab.String(cut)
	if same(got, cut) {
		t.Error("the table keeps the caller's memory")
	}
}

func TestObjectMetaConditionsHistory(t *testing.T) {
	var tab Table
	mk := func() (metav1.ObjectMeta, []metav1.Condition, meta.History) {
		return metav1.ObjectMeta{
				Name: fresh("a"), Namespace: fresh("apps"), Finalizers: []string{fresh("finalizers.fluxcd.io")},
				Labels:      map[string]string{"team": fresh("platform")},
				Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": fresh(`{"data":{}}`)},
			}, []metav1.Condition{{
				Type: fresh("Ready"), Status: metav1.ConditionStatus(fresh("True")),
				Reason: fresh("ReconciliationSucceeded"), Message: fresh("Applied revision: main@sha1:abc"),
			}}, meta.History{{
				Digest: fresh("sha256:1"), LastReconciledStatus: fresh("ReconciliationSucceeded"),
				Metadata: map[string]string{"revision": fresh("main@sha1:abc")},
			}}
	}
	m1, c1, h1 := mk()
	m2, c2, h2 := mk()
	for _, x := range []struct {
		m *metav1.ObjectMeta
		c []metav1.Condition
		h meta.History
	}{{&m1, c1, h1}, {&m2, c2, h2}} {
		tab.ObjectMeta(x.m)
		tab.Conditions(x.c)
		tab.History(x.h)
	}
	for _, p := range []struct{ what, a, b string }{
		{"namespace", m1.Namespace, m2.Namespace},
		{"finalizer", m1.Finalizers[0], m2.Finalizers[0]},
		{"label value", m1.Labels["team"], m2.Labels["team"]},
		{"condition type", c1[0].Type, c2[0].Type},
		{"condition status", string(c1[0].Status), string(c2[0].Status)},
		{"condition reason", c1[0].Reason, c2[0].Reason},
		{"condition message", c1[0].Message, c2[0].Message},
		{"history reason", h1[0].LastReconciledStatus, h2[0].LastReconciledStatus},
		{"history revision", h1[0].Metadata["revision"], h2[0].Metadata["revision"]},
	} {
		if !same(p.a, p.b) {
			t.Errorf("%s %q is not shared", p.what, p.a)
		}
	}
	if same(m1.Name, m2.Name) || same(h1[0].Digest, h2[0].Digest) {
		t.Error("names or digests, which objects do not share, were interned")
	}
	if same(m1.Annotations["kubectl.kubernetes.io/last-applied-configuration"], m2.Annotations["kubectl.kubernetes.io/last-applied-configuration"]) {
		t.Error("annotations were interned")
	}
}
