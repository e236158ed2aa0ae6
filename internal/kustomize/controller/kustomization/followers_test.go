package kustomization

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// TestSubstitutionFollowsProducer: Kustomization producer applies the
// ConfigMap vars from one repository; consumer, built from another
// repository with a one-hour interval and no dependsOn, substitutes from
// vars. A push that changes vars in the producer's repository reaches the
// consumer's applied object at once: nothing else queues the consumer
// (its source does not change, vars has no reconcile.fluxcd.io/watch
// label, and --requeue-dependency is an hour in these tests).
func TestSubstitutionFollowsProducer(t *testing.T) {
	f, fleetSHA := newFixture(t, map[string]string{
		"consumer/kustomization.yaml": "resources: [out.yaml]\n",
		"consumer/out.yaml":           configMapYAML("out", "greeting", "${greeting} from ${place:=here}"),
	})
	producerRepo := f.srv
	producerRepo.InitRepo(t, "producer.git")
	sha := producerRepo.Commit(t, "producer.git", gitserver.Commit{Message: "vars", Files: map[string]string{
		"vars/vars.yaml": configMapYAML("vars", "greeting", "hello"),
	}})
	src := newGitRepository(f.ns, producerRepo.HTTPURL("producer.git"))
	src.Name = "producer"
	f.env.Create(t, src)

	producer := f.kustomization("producer", "./vars", func(s *kustomizev1.KustomizationSpec) {
		s.SourceRef.Name = src.Name
	})
	consumer := f.kustomization("consumer", "./consumer", func(s *kustomizev1.KustomizationSpec) {
		s.PostBuild = &kustomizev1.PostBuild{SubstituteFrom: []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "vars"}}}
	})
	f.env.Create(t, producer)
	f.waitApplied(producer, "main@sha1:"+sha)
	vars := f.configMap("vars")
	if vars.Labels[kustomizev1.NameLabel] != producer.Name || vars.Labels["reconcile.fluxcd.io/watch"] != "" {
		t.Fatalf("vars labels = %v, want the producer's owner labels and no watch label", vars.Labels)
	}
	f.env.Create(t, consumer)
	f.waitApplied(consumer, "main@sha1:"+fleetSHA)
	waitValue(t, f, "out", "greeting", "hello from here")

	producerRepo.Commit(t, "producer.git", gitserver.Commit{Message: "vars: bonjour", Files: map[string]string{
		"vars/vars.yaml": configMapYAML("vars", "greeting", "bonjour"),
	}})
	f.env.RequestReconcile(t, src)
	waitValue(t, f, "out", "greeting", "bonjour from here")

	// A second change, this time to a key the consumer did not use yet.
	producerRepo.Commit(t, "producer.git", gitserver.Commit{Message: "vars: place", Files: map[string]string{
		"vars/vars.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vars\ndata:\n  greeting: bonjour\n  place: Paris\n",
	}})
	f.env.RequestReconcile(t, src)
	waitValue(t, f, "out", "greeting", "bonjour from Paris")
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(consumer), consumer); err != nil {
		t.Fatal(err)
	}
	if consumer.Status.LastAppliedRevision != "main@sha1:"+fleetSHA {
		t.Errorf("consumer applied %s, want its own source's %s: only vars changed", consumer.Status.LastAppliedRevision, fleetSHA)
	}
}

// waitValue waits until ConfigMap name in f's namespace holds value at key.
func waitValue(t *testing.T, f *fixture, name, key, value string) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var cm corev1.ConfigMap
		if err := f.env.Client.Get(ctx, clientKey(f.ns, name), &cm); err != nil {
			return false, err.Error()
		}
		return cm.Data[key] == value, "ConfigMap " + name + ": " + key + " = " + cm.Data[key] + ", want " + value
	})
}

func TestOwnerMetadata(t *testing.T) {
	in := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "vars", Namespace: "apps", UID: "u1", ResourceVersion: "42",
			Labels: map[string]string{kustomizev1.NameLabel: "infra", kustomizev1.NamespaceLabel: "flux-system", "team": "a"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"c2VjcmV0"}}`,
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller"}},
		},
	}
	got, err := ownerMetadata(in)
	if err != nil {
		t.Fatal(err)
	}
	m := got.(*metav1.PartialObjectMetadata)
	if m.Name != "vars" || m.Namespace != "apps" || m.UID != "u1" || m.ResourceVersion != "42" || m.Kind != "Secret" {
		t.Errorf("identity lost: %+v", m)
	}
	if len(m.Annotations) != 0 || len(m.ManagedFields) != 0 {
		t.Errorf("annotations or managed fields kept: %v %v", m.Annotations, m.ManagedFields)
	}
	if len(m.Labels) != 0 {
		t.Errorf("labels kept: %v (the API server filters by them; the watch maps by name)", m.Labels)
	}
	if m.APIVersion != "v1" {
		t.Errorf("apiVersion = %q, want v1", m.APIVersion)
	}
	if other, _ := ownerMetadata("not metadata"); other != "not metadata" {
		t.Errorf("a non-metadata object was changed: %v", other)
	}
}

func TestProducedSelector(t *testing.T) {
	sel := producedSelector()
	for _, tt := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{kustomizev1.NameLabel: "a", kustomizev1.NamespaceLabel: "b"}, true},
		{map[string]string{kustomizev1.NameLabel: "a"}, false},
		{map[string]string{"reconcile.fluxcd.io/watch": "Enabled"}, false},
		{nil, false},
	} {
		if got := sel.Matches(labels.Set(tt.labels)); got != tt.want {
			t.Errorf("%v matches %v = %v, want %v", sel, tt.labels, got, tt.want)
		}
	}
}
