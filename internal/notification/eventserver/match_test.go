package eventserver

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

func TestSeverityWanted(t *testing.T) {
	tests := []struct {
		alert, event string
		want         bool
	}{
		{"", "info", true},
		{"", "error", true},
		{"info", "info", true},
		{"info", "error", true},
		{"error", "error", true},
		{"error", "info", false},
		{"info", "trace", false},
		{"error", "trace", false},
	}
	for _, tt := range tests {
		if got := severityWanted(tt.alert, tt.event); got != tt.want {
			t.Errorf("severityWanted(%q, %q) = %v, want %v", tt.alert, tt.event, got, tt.want)
		}
	}
}

func TestSourceSelects(t *testing.T) {
	obj := corev1.ObjectReference{Kind: "GitRepository", Namespace: "apps", Name: "podinfo"}
	labelsOf := func(l map[string]string) labelReader {
		return func() (map[string]string, error) { return l, nil }
	}
	failing := func() (map[string]string, error) { return nil, errors.New("boom") }
	ref := func(kind, name, ns string, ml map[string]string) notificationv1.CrossNamespaceObjectReference {
		return notificationv1.CrossNamespaceObjectReference{Kind: kind, Name: name, Namespace: ns, MatchLabels: ml}
	}
	tests := []struct {
		name    string
		src     notificationv1.CrossNamespaceObjectReference
		alertNS string
		noCross bool
		labels  labelReader
		want    bool
		wantErr bool
	}{
		{name: "kind and name", src: ref("GitRepository", "podinfo", "", nil), alertNS: "apps", want: true},
		{name: "kind case-insensitive", src: ref("gitrepository", "podinfo", "", nil), alertNS: "apps", want: true},
		{name: "other name", src: ref("GitRepository", "other", "", nil), alertNS: "apps"},
		{name: "other kind", src: ref("Kustomization", "podinfo", "", nil), alertNS: "apps"},
		{name: "alert in other namespace", src: ref("GitRepository", "podinfo", "", nil), alertNS: "flux-system"},
		{name: "star", src: ref("GitRepository", "*", "", nil), alertNS: "apps", want: true},
		{name: "star with matching labels", src: ref("GitRepository", "*", "", map[string]string{"team": "a"}),
			alertNS: "apps", labels: labelsOf(map[string]string{"team": "a", "x": "y"}), want: true},
		{name: "star with other labels", src: ref("GitRepository", "*", "", map[string]string{"team": "a"}),
			alertNS: "apps", labels: labelsOf(map[string]string{"team": "b"})},
		{name: "name with matching labels", src: ref("GitRepository", "podinfo", "", map[string]string{"team": "a"}),
			alertNS: "apps", labels: labelsOf(map[string]string{"team": "a"}), want: true},
		{name: "name with other labels (Flux applies matchLabels to any name)", src: ref("GitRepository", "podinfo", "", map[string]string{"team": "a"}),
			alertNS: "apps", labels: labelsOf(map[string]string{"team": "b"})},
		{name: "labels unreadable", src: ref("GitRepository", "*", "", map[string]string{"team": "a"}),
			alertNS: "apps", labels: failing, wantErr: true},
		{name: "cross-namespace allowed", src: ref("GitRepository", "podinfo", "apps", nil), alertNS: "flux-system", want: true},
		{name: "cross-namespace refused", src: ref("GitRepository", "podinfo", "apps", nil), alertNS: "flux-system",
			noCross: true, wantErr: true},
		{name: "same namespace named with noCross", src: ref("GitRepository", "podinfo", "apps", nil), alertNS: "apps",
			noCross: true, want: true},
		{name: "any namespace", src: ref("GitRepository", "*", "*", nil), alertNS: "flux-system", want: true},
		{name: "any namespace refused", src: ref("GitRepository", "*", "*", nil), alertNS: "flux-system",
			noCross: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.labels == nil {
				tt.labels = func() (map[string]string, error) { t.Fatal("labels read without matchLabels"); return nil, nil }
			}
			got, err := sourceSelects(tt.src, tt.alertNS, obj, tt.noCross, tt.labels)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestMessagePasses(t *testing.T) {
	tests := []struct {
		name                 string
		inclusion, exclusion []string
		message              string
		want                 bool
		wantErrs             int
	}{
		{name: "no lists", message: "anything", want: true},
		{name: "included", inclusion: []string{"^stored"}, message: "stored artifact", want: true},
		{name: "not included", inclusion: []string{"^stored"}, message: "no change"},
		{name: "second inclusion", inclusion: []string{"nope", "change$"}, message: "no change", want: true},
		{name: "excluded", exclusion: []string{"no change"}, message: "no change"},
		{name: "not excluded", exclusion: []string{"no change"}, message: "stored artifact", want: true},
		{name: "included then excluded", inclusion: []string{"artifact"}, exclusion: []string{"^stored"},
			message: "stored artifact"},
		{name: "bad regex ignored", exclusion: []string{"("}, message: "x", want: true, wantErrs: 1},
		{name: "only bad inclusion", inclusion: []string{"("}, message: "x", wantErrs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := messagePasses(tt.inclusion, tt.exclusion, tt.message)
			if got != tt.want || len(errs) != tt.wantErrs {
				t.Errorf("got %v, %v; want %v with %d errors", got, errs, tt.want, tt.wantErrs)
			}
		})
	}
}

func TestSelects(t *testing.T) {
	event := &events.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "GitRepository", Namespace: "apps", Name: "podinfo"},
		Severity:       events.SeverityInfo, Message: "stored artifact",
	}
	alert := func(change func(*notificationv1beta3.AlertSpec)) *notificationv1beta3.Alert {
		a := &notificationv1beta3.Alert{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "a"},
			Spec: notificationv1beta3.AlertSpec{
				ProviderRef:  meta.LocalObjectReference{Name: "p"},
				EventSources: []notificationv1.CrossNamespaceObjectReference{{Kind: "Bucket", Name: "*"}, {Kind: "GitRepository", Name: "*"}},
			},
		}
		if change != nil {
			change(&a.Spec)
		}
		return a
	}
	noLabels := func() (map[string]string, error) { return nil, nil }
	tests := []struct {
		name  string
		alert *notificationv1beta3.Alert
		want  bool
	}{
		{name: "second source matches", alert: alert(nil), want: true},
		{name: "suspended", alert: alert(func(s *notificationv1beta3.AlertSpec) { s.Suspend = true })},
		{name: "error only", alert: alert(func(s *notificationv1beta3.AlertSpec) { s.EventSeverity = "error" })},
		{name: "no source", alert: alert(func(s *notificationv1beta3.AlertSpec) { s.EventSources = s.EventSources[:1] })},
		{name: "excluded", alert: alert(func(s *notificationv1beta3.AlertSpec) { s.ExclusionList = []string{"artifact"} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, errs := selects(tt.alert, event, false, noLabels)
			if sel.selected != tt.want || len(errs) != 0 {
				t.Errorf("got %+v, %v; want selected=%v", sel, errs, tt.want)
			}
		})
	}
}
