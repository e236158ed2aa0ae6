package createcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TenantLabel marks the objects of a tenant with its name (Flux's label).
const TenantLabel = "toolkit.fluxcd.io/tenant"

// tenantFlags are the flags of `create tenant`.
type tenantFlags struct {
	namespaces     []string
	clusterRole    string
	serviceAccount bool
	skipNamespace  bool
}

func newTenantCommand(e *env) *cobra.Command {
	var f tenantFlags
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Create or update a tenant",
		Long: `The create tenant command generates namespaces, service accounts and role bindings to limit the
reconcilers scope to the tenant namespaces.`,
		Example: `  # Create a tenant with access to a namespace
  weir create tenant dev-team \
    --with-namespace=frontend \
    --label=environment=dev

  # Generate tenant namespaces and role bindings in YAML format
  weir create tenant dev-team \
    --with-namespace=frontend \
    --with-namespace=backend \
    --export > dev-team.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return e.createTenant(c, args[0], f)
		},
	}
	cmd.Flags().StringSliceVar(&f.namespaces, "with-namespace", nil, "namespace belonging to this tenant")
	cmd.Flags().StringVar(&f.clusterRole, "cluster-role", "cluster-admin", "cluster role of the tenant role binding")
	cmd.Flags().BoolVar(&f.serviceAccount, "with-service-account", true,
		"create a service account named after the tenant in each namespace and bind the cluster role to it")
	cmd.Flags().BoolVar(&f.skipNamespace, "skip-namespace", false,
		"do not create the namespaces, only the service accounts and role bindings in them (the namespaces must exist)")
	return cmd
}

type tenantObjects struct {
	namespace   *corev1.Namespace
	account     *corev1.ServiceAccount
	roleBinding *rbacv1.RoleBinding
}

// tenant builds, per namespace, what flux's tenant is: the Namespace
// (unless f.skipNamespace), a ServiceAccount named after the tenant (when
// f.serviceAccount), and a RoleBinding <tenant>-reconciler granting the
// cluster role to the impersonated user gotk:<namespace>:reconciler and
// to the account. Objects left out are nil.
func (e *env) tenant(name string, f tenantFlags) ([]tenantObjects, error) {
	var out []tenantObjects
	for _, ns := range f.namespaces {
		if errs := validation.IsQualifiedName(ns); len(errs) > 0 {
			return nil, fmt.Errorf("invalid namespace '%s': %v", ns, errs)
		}
		labels, err := e.labels()
		if err != nil {
			return nil, err
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[TenantLabel] = name
		t := tenantObjects{
			roleBinding: &rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name + "-reconciler", Namespace: ns, Labels: labels},
				Subjects: []rbacv1.Subject{
					{APIGroup: rbacv1.GroupName, Kind: "User", Name: fmt.Sprintf("gotk:%s:reconciler", ns)},
				},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: f.clusterRole},
			},
		}
		if !f.skipNamespace {
			t.namespace = &corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels},
			}
		}
		if f.serviceAccount {
			t.account = &corev1.ServiceAccount{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			}
			t.roleBinding.Subjects = append(t.roleBinding.Subjects, rbacv1.Subject{Kind: "ServiceAccount", Name: name, Namespace: ns})
		}
		out = append(out, t)
	}
	return out, nil
}

// objects lists t's objects in the order they are applied and exported.
func (t tenantObjects) objects() []client.Object {
	var out []client.Object
	if t.namespace != nil {
		out = append(out, t.namespace)
	}
	if t.account != nil {
		out = append(out, t.account)
	}
	return append(out, t.roleBinding)
}

func (e *env) createTenant(c *cobra.Command, name string, f tenantFlags) error {
	if errs := validation.IsQualifiedName(name); len(errs) > 0 {
		return fmt.Errorf("invalid tenant name '%s': %v", name, errs)
	}
	if f.clusterRole == "" {
		return fmt.Errorf("cluster-role is required")
	}
	if len(f.namespaces) == 0 {
		return fmt.Errorf("with-namespace is required")
	}
	objs, err := e.tenant(name, f)
	if err != nil {
		return err
	}
	if e.o.export {
		for _, t := range objs {
			for _, o := range t.objects() {
				if err := writeYAML(e.streams.Out, o); err != nil {
					return err
				}
			}
		}
		return nil
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	for _, t := range objs {
		if t.namespace != nil {
			e.p.Actionf("applying namespace %s", t.namespace.Name)
			if _, err := apply(ctx, cl, t.namespace); err != nil {
				return err
			}
		}
		if t.account != nil {
			e.p.Actionf("applying service account %s", t.account.Name)
			if _, err := apply(ctx, cl, t.account); err != nil {
				return err
			}
		}
		e.p.Actionf("applying role binding %s", t.roleBinding.Name)
		if err := replaceRoleRef(ctx, cl, t.roleBinding); err != nil {
			return err
		}
		if _, err := apply(ctx, cl, t.roleBinding); err != nil {
			return err
		}
	}
	e.p.Successf("tenant setup completed")
	return nil
}

// replaceRoleRef deletes a live RoleBinding whose roleRef differs from
// want's: roleRef cannot change, so the binding is recreated, as the flux
// CLI does.
func replaceRoleRef(ctx context.Context, c client.Client, want *rbacv1.RoleBinding) error {
	live := &rbacv1.RoleBinding{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), live)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if live.RoleRef == want.RoleRef {
		return nil
	}
	return client.IgnoreNotFound(c.Delete(ctx, live))
}
