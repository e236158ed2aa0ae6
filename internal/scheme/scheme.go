// Package scheme builds the runtime.Scheme every weir binary and test uses:
// client-go's built-in kinds, CustomResourceDefinitions, and every weir
// (Flux-compatible) API kind.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

// adders lists every group registered by New, in one place.
var adders = []func(*runtime.Scheme) error{
	clientgoscheme.AddToScheme,
	apiextensionsv1.AddToScheme,
	sourcev1.AddToScheme,
	kustomizev1.AddToScheme,
	helmv2.AddToScheme,
	notificationv1.AddToScheme,
	notificationv1beta3.AddToScheme,
	imagev1.AddToScheme,
	sourceextensionsv1beta1.AddToScheme,
}

// New returns a scheme with every kind weir reads or writes.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range adders {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Must is New for package initialisation; it panics only on a programming
// error (two groups registering the same kind differently).
func Must() *runtime.Scheme {
	s, err := New()
	if err != nil {
		panic(err)
	}
	return s
}
