package manifests

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// UIName names the web UI's Deployment, ServiceAccount and Service.
const UIName = "weir-ui"

// uiPort is where the UI's pod serves (weir-controller --ui-addr).
const uiPort = 9080

// uiDeployment is the UI's Deployment, in either layout: it never shares
// a pod, nor a ServiceAccount, with the controllers.
var uiDeployment = deploymentSpec{name: UIName, components: []string{UI}}

// wantsUI reports whether --components or --components-extra name the UI.
func (o Options) wantsUI() bool {
	return slices.Contains(o.Components, UI) || slices.Contains(o.ComponentsExtra, UI)
}

// uiRBAC lets the UI's ServiceAccount check login tokens, impersonate the
// logged-in user (name, groups, service accounts, UID and extra fields) and
// record Events; it reads nothing with rights of its own.
func (g generator) uiRBAC() []runtime.Object {
	name := g.clusterMeta(UIName)
	return []runtime.Object{
		&rbacv1.ClusterRole{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion, "ClusterRole"), ObjectMeta: name, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"users", "groups", "serviceaccounts"}, Verbs: []string{"impersonate"}},
			// uids and userextras/<key>: RBAC has no wildcard for the keys.
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		}},
		&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion, "ClusterRoleBinding"), ObjectMeta: name,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: UIName, Namespace: g.opts.Namespace}}},
	}
}

// uiService sends port 80 to the UI's pods.
func (g generator) uiService() runtime.Object {
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: g.meta(UIName, UIName),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{"app": UIName},
			Ports: []corev1.ServicePort{{
				Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http-ui"),
			}},
		},
	}
}
