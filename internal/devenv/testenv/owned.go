package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// ConfigMapsYAML is one manifest of n ConfigMaps named <prefix>-0000…, for
// tests that need an apply long enough to interrupt.
func ConfigMapsYAML(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-%04d\ndata:\n  i: %q\n", prefix, i, fmt.Sprint(i))
	}
	return b.String()
}

// OwnedConfigMaps counts the ConfigMaps in namespace ns labelled as applied
// by the Kustomization owner (kustomize.toolkit.fluxcd.io/name and
// /namespace), read from the API server.
func (e *Env) OwnedConfigMaps(t testing.TB, ns string, owner client.ObjectKey) int {
	t.Helper()
	var list corev1.ConfigMapList
	if err := e.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{
		kustomizev1.NameLabel: owner.Name, kustomizev1.NamespaceLabel: owner.Namespace,
	}); err != nil {
		t.Fatalf("listing ConfigMaps of %s: %v", owner, err)
	}
	return len(list.Items)
}
