package scheme

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKnowsEveryFluxKind(t *testing.T) {
	s := Must()
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "OCIRepository"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "Bucket"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmRepository"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmChart"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "ExternalArtifact"},
		{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"},
		{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"},
		{Group: "notification.toolkit.fluxcd.io", Version: "v1", Kind: "Receiver"},
		{Group: "notification.toolkit.fluxcd.io", Version: "v1beta3", Kind: "Alert"},
		{Group: "notification.toolkit.fluxcd.io", Version: "v1beta3", Kind: "Provider"},
		{Group: "image.toolkit.fluxcd.io", Version: "v1", Kind: "ImageRepository"},
		{Group: "image.toolkit.fluxcd.io", Version: "v1", Kind: "ImagePolicy"},
		{Group: "image.toolkit.fluxcd.io", Version: "v1", Kind: "ImageUpdateAutomation"},
		{Group: "source.extensions.fluxcd.io", Version: "v1beta1", Kind: "ArtifactGenerator"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("scheme does not know %s", gvk)
		}
		list := gvk
		list.Kind += "List"
		if !s.Recognizes(list) {
			t.Errorf("scheme does not know %s", list)
		}
	}
}
