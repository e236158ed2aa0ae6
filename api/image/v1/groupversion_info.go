package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "image.toolkit.fluxcd.io", Version: "v1"}

	// SchemeBuilder collects the functions that register this package's
	// kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers this package's kinds with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&ImageRepository{},
		&ImageRepositoryList{},
		&ImagePolicy{},
		&ImagePolicyList{},
		&ImageUpdateAutomation{},
		&ImageUpdateAutomationList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
