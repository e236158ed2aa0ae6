package manifests

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/config/crd"
)

// Labels Flux's tools select Flux's objects by.
const (
	PartOfLabel       = meta.PartOfLabel
	PartOfValue       = meta.PartOfValue
	InstanceLabel     = meta.InstanceLabel
	VersionLabel      = meta.VersionLabel
	ComponentLabel    = meta.ComponentLabel
	ControlPlaneLabel = meta.ControllerLabel
)

// Ports of every controller, as Flux's.
const (
	httpPort    = 9090
	metricsPort = 8080
	healthPort  = 9440
	// webhookPort serves the notification controller's Receivers.
	webhookPort = 9292
	// singleEventsPort is where the notification controller takes events
	// in the single layout, where 9090 already serves artifacts.
	singleEventsPort = 9091
)

// Generate returns every object of an installation, in the order they are
// applied: Namespace, CRDs, ServiceAccounts, ResourceQuota, RBAC, Services,
// Deployments, NetworkPolicies.
func Generate(opts Options) ([]*unstructured.Unstructured, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	components, _, err := opts.Selected()
	if err != nil {
		return nil, err
	}
	if len(components) == 0 {
		return nil, fmt.Errorf("no component weir can run was selected (weir runs %s)", strings.Join(componentOrder, ", "))
	}
	g := generator{opts: opts, components: components, ui: opts.wantsUI()}
	objs := []runtime.Object{g.namespace()}
	crds, err := g.crds()
	if err != nil {
		return nil, err
	}
	objs = append(objs, crds...)
	for _, d := range g.deployments() {
		objs = append(objs, g.serviceAccount(d))
	}
	if g.ui {
		objs = append(objs, g.serviceAccount(uiDeployment))
	}
	objs = append(objs, g.resourceQuota())
	objs = append(objs, g.rbac()...)
	if g.ui {
		objs = append(objs, g.uiRBAC()...)
	}
	if g.has(SourceController) {
		objs = append(objs, g.sourceService())
	}
	objs = append(objs, g.shardServices()...)
	if g.has(SourceWatcher) && (g.opts.Layout == LayoutSplit || !g.has(SourceController)) {
		objs = append(objs, g.service(SourceWatcher, SourceWatcher, "http"))
	}
	if g.has(NotificationController) {
		objs = append(objs, g.eventsService(), g.webhookService())
	}
	if g.ui {
		objs = append(objs, g.uiService())
	}
	for _, d := range append(g.deployments(), g.shardDeployments()...) {
		objs = append(objs, g.deployment(d))
	}
	if g.ui {
		objs = append(objs, g.deployment(uiDeployment))
	}
	if opts.NetworkPolicy {
		objs = append(objs, g.networkPolicies()...)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

type generator struct {
	opts       Options
	components []string
	// ui adds the web UI's Deployment (--components-extra=ui).
	ui bool
}

func (g generator) has(component string) bool { return slices.Contains(g.components, component) }

// deploymentSpec is one Deployment to generate: its name (also its pods'
// app label, and its ServiceAccount's unless it is a shard's) and the
// components it runs. A shard's Deployment names the shard and the main
// Deployment it copies (base), whose ServiceAccount and component label
// it keeps.
type deploymentSpec struct {
	name       string
	base       string
	shard      string
	components []string
}

// account is the ServiceAccount d runs as, also its component label.
func (d deploymentSpec) account() string {
	if d.base != "" {
		return d.base
	}
	return d.name
}

func (g generator) deployments() []deploymentSpec {
	if g.opts.Layout == LayoutSingle {
		return []deploymentSpec{{name: SingleName, components: g.components}}
	}
	out := make([]deploymentSpec, 0, len(g.components))
	for _, c := range g.components {
		out = append(out, deploymentSpec{name: c, components: []string{c}})
	}
	return out
}

// runs returns the name of the Deployment that runs component.
func (g generator) runs(component string) string {
	if g.opts.Layout == LayoutSingle {
		return SingleName
	}
	return component
}

func (g generator) labels(component string) map[string]string {
	l := map[string]string{
		PartOfLabel:   PartOfValue,
		InstanceLabel: g.opts.Namespace,
		VersionLabel:  g.opts.Version,
	}
	if component != "" {
		l[ComponentLabel] = component
	}
	return l
}

func (g generator) meta(name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: g.opts.Namespace, Labels: g.labels(component)}
}

// clusterMeta names a cluster-wide object after its namespace, as Flux's
// installer suffixes them, so that two installations do not collide.
func (g generator) clusterMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name + "-" + g.opts.Namespace, Labels: g.labels("")}
}

func (g generator) namespace() runtime.Object {
	m := metav1.ObjectMeta{Name: g.opts.Namespace, Labels: g.labels("")}
	m.Labels["pod-security.kubernetes.io/warn"] = "restricted"
	m.Labels["pod-security.kubernetes.io/warn-version"] = "latest"
	return &corev1.Namespace{TypeMeta: typeMeta(corev1.SchemeGroupVersion, "Namespace"), ObjectMeta: m}
}

// crds returns the CRDs served by the selected components.
func (g generator) crds() ([]runtime.Object, error) {
	all, err := crd.Load(crd.Options{Version: g.opts.Version, Instance: g.opts.Namespace})
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, c := range all {
		if !g.has(crd.Component(c)) {
			continue
		}
		c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		out = append(out, c)
	}
	return out, nil
}

func (g generator) serviceAccount(d deploymentSpec) runtime.Object {
	return &corev1.ServiceAccount{TypeMeta: typeMeta(corev1.SchemeGroupVersion, "ServiceAccount"), ObjectMeta: g.meta(d.name, d.name)}
}

// resourceQuota lets the system-cluster-critical pods run in the namespace
// where admission limits that priority class to quota-covered namespaces.
func (g generator) resourceQuota() runtime.Object {
	return &corev1.ResourceQuota{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ResourceQuota"),
		ObjectMeta: g.meta("critical-pods-"+g.opts.Namespace, ""),
		Spec: corev1.ResourceQuotaSpec{
			Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1000")},
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
				ScopeName: corev1.ResourceQuotaScopePriorityClass,
				Operator:  corev1.ScopeSelectorOpIn,
				Values:    []string{"system-node-critical", "system-cluster-critical"},
			}}},
		},
	}
}

// fluxGroups are the API groups of weir's (and Flux's) custom resources.
var fluxGroups = []string{
	"source.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io",
	"notification.toolkit.fluxcd.io", "image.toolkit.fluxcd.io", "source.extensions.fluxcd.io",
}

func (g generator) rbac() []runtime.Object {
	crTM := typeMeta(rbacv1.SchemeGroupVersion, "ClusterRole")
	crbTM := typeMeta(rbacv1.SchemeGroupVersion, "ClusterRoleBinding")
	var rules []rbacv1.PolicyRule
	for _, group := range fluxGroups {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"*"}, Verbs: []string{"*"}})
	}
	rules = append(rules,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces", "secrets", "configmaps", "serviceaccounts"},
			Verbs: []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		// Leader election.
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps/status"}, Verbs: []string{"get", "update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		// Object-level workload identity.
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
		// API priority and fairness.
		rbacv1.PolicyRule{NonResourceURLs: []string{"/livez/ping"}, Verbs: []string{"head"}},
	)
	var controllers, reconcilers []rbacv1.Subject
	for _, d := range g.deployments() {
		sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: d.name, Namespace: g.opts.Namespace}
		controllers = append(controllers, sa)
		// The appliers act with cluster-admin, as Flux's kustomize- and
		// helm-controller do, unless a Kustomization names a service account.
		if slices.Contains(d.components, KustomizeController) || slices.Contains(d.components, HelmController) {
			reconcilers = append(reconcilers, sa)
		}
	}
	objs := []runtime.Object{
		&rbacv1.ClusterRole{TypeMeta: crTM, ObjectMeta: g.clusterMeta("crd-controller"), Rules: rules},
		&rbacv1.ClusterRoleBinding{TypeMeta: crbTM, ObjectMeta: g.clusterMeta("crd-controller"),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "crd-controller-" + g.opts.Namespace},
			Subjects: controllers},
	}
	if len(reconcilers) > 0 {
		objs = append(objs, &rbacv1.ClusterRoleBinding{TypeMeta: crbTM, ObjectMeta: g.clusterMeta("cluster-reconciler"),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: reconcilers})
	}
	edit := g.clusterMeta("flux-edit")
	edit.Labels["rbac.authorization.k8s.io/aggregate-to-admin"] = "true"
	edit.Labels["rbac.authorization.k8s.io/aggregate-to-edit"] = "true"
	view := g.clusterMeta("flux-view")
	view.Labels["rbac.authorization.k8s.io/aggregate-to-admin"] = "true"
	view.Labels["rbac.authorization.k8s.io/aggregate-to-edit"] = "true"
	view.Labels["rbac.authorization.k8s.io/aggregate-to-view"] = "true"
	return append(objs,
		&rbacv1.ClusterRole{TypeMeta: crTM, ObjectMeta: edit, Rules: []rbacv1.PolicyRule{{
			APIGroups: fluxGroups, Resources: []string{"*"},
			Verbs: []string{"create", "delete", "deletecollection", "patch", "update"},
		}}},
		&rbacv1.ClusterRole{TypeMeta: crTM, ObjectMeta: view, Rules: []rbacv1.PolicyRule{{
			APIGroups: fluxGroups, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"},
		}}},
	)
}

// sourceService is Flux's source-controller Service: port 80 to the
// artifact server of the Deployment that runs the source controller;
// kustomize-controller and Flux's other consumers download from it.
func (g generator) sourceService() runtime.Object {
	return g.service(SourceController, SourceController, "http")
}

// eventsService is Flux's notification-controller Service: the other
// controllers POST their events to it (--events-addr).
func (g generator) eventsService() runtime.Object {
	return g.service(NotificationController, NotificationController, g.eventsPortName())
}

// eventsPortName names the container port events arrive on: Flux's "http"
// in the split layout; in the single layout "http" serves artifacts.
func (g generator) eventsPortName() string {
	if g.opts.Layout == LayoutSingle {
		return "http-events"
	}
	return "http"
}

// webhookService is Flux's webhook-receiver Service: Git hosts and
// registries call Receivers through it (port 80 to the pods' 9292).
func (g generator) webhookService() runtime.Object {
	return g.service("webhook-receiver", NotificationController, "http-webhook")
}

// service is a ClusterIP Service named name, labelled as component's,
// sending port 80 to targetPort of the pods that run component.
func (g generator) service(name, component, targetPort string) runtime.Object {
	m := g.meta(name, component)
	m.Labels[ControlPlaneLabel] = "controller"
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{"app": g.runs(component)},
			Ports: []corev1.ServicePort{{
				Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString(targetPort),
			}},
		},
	}
}

func (g generator) deployment(d deploymentSpec) runtime.Object {
	serves := servesArtifacts(d)
	m := g.meta(d.name, d.account())
	m.Labels[ControlPlaneLabel] = "controller"
	podLabels := map[string]string{"app": d.name, ComponentLabel: d.account(), PartOfLabel: PartOfValue}
	podAnnotations := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": fmt.Sprint(metricsPort)}
	if d.shard != "" {
		m.Annotations = map[string]string{ShardRoleAnnotation: ShardRole}
		podAnnotations[ShardRoleAnnotation] = ShardRole
	}
	grace := int64(60)
	if slices.Contains(d.components, HelmController) {
		// Flux's helm-controller: ten minutes for running Helm actions to
		// finish, matching --graceful-shutdown-timeout's default.
		grace = 600
	}
	strategy := appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	if serves && !g.autoSharded(d) {
		// The artifact store is an emptyDir: two pods would serve
		// different artifacts under one Service. In auto mode each pod
		// advertises its own address, and a rolling update is a replica
		// leaving and one joining.
		strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		if len(d.components) == 1 {
			grace = 10
		}
	}
	spec := corev1.PodSpec{
		ServiceAccountName:            d.account(),
		PriorityClassName:             "system-cluster-critical",
		TerminationGracePeriodSeconds: &grace,
		SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr.To(int64(1337))},
		NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
		Containers:                    []corev1.Container{g.container(d, serves)},
		Volumes:                       []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	if stores(d) {
		spec.Volumes = append([]corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}, spec.Volumes...)
	}
	if g.opts.ImagePullSecret != "" {
		spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: g.opts.ImagePullSecret}}
	}
	for _, key := range g.opts.TolerationKeys {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
	return &appsv1.Deployment{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "Deployment"),
		ObjectMeta: m,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(g.replicas(d)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": d.name}},
			Strategy: strategy,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      podLabels,
					Annotations: podAnnotations,
				},
				Spec: spec,
			},
		},
	}
}

// servesArtifacts reports whether d's pod stores and serves artifacts:
// it runs the source controller or source-watcher.
func servesArtifacts(d deploymentSpec) bool {
	return slices.Contains(d.components, SourceController) || slices.Contains(d.components, SourceWatcher)
}

// stores reports whether d's pod needs the /data volume: it serves
// artifacts or runs the image-reflector (tag lists).
func stores(d deploymentSpec) bool {
	return servesArtifacts(d) || slices.Contains(d.components, ImageReflectorController)
}

// advertises is the Service d's artifact URLs name: source-controller's,
// which also fronts source-watcher when one pod runs both, or its shard's
// source-controller-<shard>.
func advertises(d deploymentSpec) string {
	if slices.Contains(d.components, SourceController) && d.shard != "" {
		return SourceController + "-" + d.shard
	}
	if slices.Contains(d.components, SourceController) {
		return SourceController
	}
	return SourceWatcher
}

func (g generator) container(d deploymentSpec, serves bool) corev1.Container {
	args := []string{
		fmt.Sprintf("--watch-all-namespaces=%t", g.opts.WatchAllNamespaces),
		"--log-level=" + g.opts.LogLevel,
		"--log-encoding=json",
		"--enable-leader-election",
	}
	ports := []corev1.ContainerPort{
		{Name: "http-prom", ContainerPort: metricsPort, Protocol: corev1.ProtocolTCP},
		{Name: "healthz", ContainerPort: healthPort, Protocol: corev1.ProtocolTCP},
	}
	if d.name == uiDeployment.name {
		// Every replica serves: no leader election, hence no leases.
		args = append(args[:3], fmt.Sprintf("--ui-addr=:%d", uiPort))
		ports = append([]corev1.ContainerPort{{Name: "http-ui", ContainerPort: uiPort, Protocol: corev1.ProtocolTCP}}, ports...)
	}
	mounts := []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
	if stores(d) {
		// The source controller's artifacts and the image-reflector's tag
		// lists, as Flux's --storage-path=/data on an emptyDir.
		args = append(args, "--storage-path=/data")
		mounts = append([]corev1.VolumeMount{{Name: "data", MountPath: "/data"}}, mounts...)
	}
	if serves {
		args = append(args, g.storageAdvAddr(d))
		ports = append([]corev1.ContainerPort{{Name: "http", ContainerPort: httpPort, Protocol: corev1.ProtocolTCP}}, ports...)
	}
	if g.has(NotificationController) && !slices.Equal(d.components, []string{NotificationController}) && d.name != uiDeployment.name {
		// First, where Flux's manifests have it, so that patches written
		// against Flux's argument positions apply.
		args = append([]string{fmt.Sprintf("--events-addr=http://%s.$(RUNTIME_NAMESPACE).svc.%s./", NotificationController, g.opts.ClusterDomain)}, args...)
	}
	if slices.Contains(d.components, NotificationController) {
		// Alone, it listens on Flux's --events-addr default (:9090) and
		// --receiverAddr default (:9292), so its args are Flux's.
		eventsPort := int32(httpPort)
		if g.opts.Layout == LayoutSingle {
			eventsPort = singleEventsPort
			args = append(args, fmt.Sprintf("--events-listen-addr=:%d", eventsPort))
		}
		ports = append(ports,
			corev1.ContainerPort{Name: g.eventsPortName(), ContainerPort: eventsPort, Protocol: corev1.ProtocolTCP},
			corev1.ContainerPort{Name: "http-webhook", ContainerPort: webhookPort, Protocol: corev1.ProtocolTCP})
	}
	args = append(args, g.appendedArgs(d)...)
	env := []corev1.EnvVar{
		{Name: "RUNTIME_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
			ContainerName: "manager", Resource: "limits.memory"}}},
	}
	if g.autoSharded(d) && serves {
		env = append(env, podIPEnv)
	}
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString("healthz"),
		}}}
	}
	return corev1.Container{
		Name:            "manager",
		Image:           g.opts.Image(),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            args,
		Ports:           ports,
		Env:             env,
		LivenessProbe:   probe("/healthz"),
		ReadinessProbe:  probe("/readyz"),
		Resources:       resources(d, serves),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		VolumeMounts: mounts,
	}
}

// appendedArgs are the arguments weir writes after Flux's own, so that
// patches written against Flux's argument positions still apply: the
// ExternalArtifact gate, the shard's label selector, --shard-mode=auto,
// and last the --controllers flag.
func (g generator) appendedArgs(d deploymentSpec) []string {
	var args []string
	if g.has(SourceWatcher) && (slices.Contains(d.components, KustomizeController) || slices.Contains(d.components, HelmController)) {
		// As flux install does with source-watcher: the consumers of
		// ExternalArtifacts get the gate that lets them read one.
		args = append(args, "--feature-gates=ExternalArtifact=true")
	}
	if sel := g.selectorArg(d); sel != "" {
		// Where the Flux Operator appends it.
		args = append(args, sel)
	}
	if g.autoSharded(d) {
		// --enable-leader-election stays: auto takes precedence.
		args = append(args, "--shard-mode=auto")
	}
	return append(args, controllersArg(d))
}

// controllersArg is the --controllers flag that runs d's components.
func controllersArg(d deploymentSpec) string {
	controllers := make([]string, 0, len(d.components))
	for _, c := range d.components {
		controllers = append(controllers, controllerOf[c])
	}
	return "--controllers=" + strings.Join(controllers, ",")
}

// resources are Flux's requests and limits for one controller, more for a
// pod that runs several, less CPU for the one that serves artifacts.
func resources(d deploymentSpec, serves bool) corev1.ResourceRequirements {
	cpuRequest, memRequest := "100m", "64Mi"
	cpuLimit, memLimit := "1000m", "1Gi"
	if len(d.components) > 1 {
		cpuRequest, memRequest, cpuLimit, memLimit = "150m", "128Mi", "2000m", "2Gi"
	} else if serves {
		cpuRequest = "50m"
	}
	return corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memLimit)},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuRequest), corev1.ResourceMemory: resource.MustParse(memRequest)},
	}
}

func (g generator) networkPolicies() []runtime.Object {
	tm := typeMeta(networkingv1.SchemeGroupVersion, "NetworkPolicy")
	tcp := corev1.ProtocolTCP
	metrics := intstr.FromInt32(metricsPort)
	webhook := intstr.FromInt32(webhookPort)
	return []runtime.Object{
		// Pods of the namespace talk to each other and to anything outside.
		&networkingv1.NetworkPolicy{TypeMeta: tm, ObjectMeta: g.meta("allow-egress", ""), Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{}},
		}},
		// Prometheus in any namespace scrapes the metrics port.
		&networkingv1.NetworkPolicy{TypeMeta: tm, ObjectMeta: g.meta("allow-scraping", ""), Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &metrics}},
			}},
		}},
		// Webhook receivers are reachable from anywhere, on the webhook
		// port only (in the single layout the same pod serves artifacts).
		&networkingv1.NetworkPolicy{TypeMeta: tm, ObjectMeta: g.meta("allow-webhooks", ""), Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": g.runs(NotificationController)}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &webhook}},
			}},
		}},
	}
}

func typeMeta(gv schema.GroupVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: kind}
}

// toUnstructured converts a typed object, leaving out the empty status and
// creationTimestamp the typed structs carry.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	delete(m, "status")
	if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(m, "spec")
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(m, "spec", "template", "metadata", "creationTimestamp")
	// A zero resource.Quantity encodes as "0"; the API server defaults the
	// divisor to 1 when it is left out, which is what is meant.
	containers, _, _ := unstructured.NestedSlice(m, "spec", "template", "spec", "containers")
	for _, c := range containers {
		env, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
		for _, e := range env {
			unstructured.RemoveNestedField(e.(map[string]any), "valueFrom", "resourceFieldRef", "divisor")
		}
		_ = unstructured.SetNestedSlice(c.(map[string]any), env, "env")
	}
	if containers != nil {
		_ = unstructured.SetNestedSlice(m, containers, "spec", "template", "spec", "containers")
	}
	return &unstructured.Unstructured{Object: m}, nil
}
