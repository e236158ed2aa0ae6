package eventserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// Keys read from a Provider's Secrets; the names are Flux's.
const (
	secretKeyAddress  = "address"
	secretKeyToken    = "token"
	secretKeyUsername = "username"
	// secretKeyPassword is the proxy's password in a proxySecretRef
	// Secret, Bitbucket Server's in a secretRef one.
	secretKeyPassword = "password"
	secretKeyHeaders  = "headers"
	secretKeyProxy    = "proxy"
	secretKeyCACert   = "ca.crt"
)

// target is a Provider resolved against its Secrets: everything needed to
// deliver one event, held only for the time of the delivery.
type target struct {
	kind     string
	address  string
	channel  string
	username string
	token    string
	password string
	headers  map[string]string
	proxy    string
	caPEM    []byte
	timeout  time.Duration
	// commitStatus is the status key, for the commit-status types.
	commitStatus string
	// alert is the Alert the delivery is for.
	alert notifier.AlertRef
	// reader reads the event's objects, for the Notifiers that look them up.
	reader client.Reader
	// githubApp is the Secret's GitHub App credentials (githubAppID…).
	githubApp *githubapp.App
	// providerUID marks the comments of the change-request types.
	providerUID string
	// namespace and serviceAccountName are the Provider's, and identity
	// what the workload-identity types get tokens from.
	namespace, serviceAccountName string
	identity                      notifier.CloudIdentity
}

// resolveTarget reads the Provider's Secrets through r. As Flux
// documents, the Secret's address, proxy and username keys, when present,
// win over spec.address, spec.proxy and spec.username; proxySecretRef wins
// over both proxies.
func resolveTarget(ctx context.Context, r client.Reader, p *notificationv1beta3.Provider) (*target, error) {
	t := &target{
		kind: p.Spec.Type, address: p.Spec.Address, channel: p.Spec.Channel,
		username: p.Spec.Username, proxy: p.Spec.Proxy, timeout: p.GetTimeout(), providerUID: string(p.UID),
		namespace: p.Namespace, serviceAccountName: p.Spec.ServiceAccountName,
	}
	if ref := p.Spec.SecretRef; ref != nil {
		data, err := readSecret(ctx, r, p.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		if err := t.fromSecret(data); err != nil {
			return nil, fmt.Errorf("secret %s/%s: %w", p.Namespace, ref.Name, err)
		}
	}
	if ref := p.Spec.ProxySecretRef; ref != nil {
		data, err := readSecret(ctx, r, p.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		proxy, err := proxyFromSecret(data)
		if err != nil {
			return nil, fmt.Errorf("proxy secret %s/%s: %w", p.Namespace, ref.Name, err)
		}
		t.proxy = proxy
	}
	if ref := p.Spec.CertSecretRef; ref != nil {
		data, err := readSecret(ctx, r, p.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		ca, ok := data[secretKeyCACert]
		if !ok {
			return nil, fmt.Errorf("cert secret %s/%s: no %q key", p.Namespace, ref.Name, secretKeyCACert)
		}
		t.caPEM = ca
	}
	if t.address == "" {
		return nil, fmt.Errorf("provider %s/%s has no address: set spec.address or the %q key of its secret",
			p.Namespace, p.Name, secretKeyAddress)
	}
	return t, nil
}

func (t *target) fromSecret(data map[string][]byte) error {
	if v := strings.TrimSpace(string(data[secretKeyAddress])); v != "" {
		t.address = v
	}
	if v := strings.TrimSpace(string(data[secretKeyProxy])); v != "" {
		t.proxy = v
	}
	if v := strings.TrimSpace(string(data[secretKeyUsername])); v != "" {
		t.username = v
	}
	t.token = strings.TrimSpace(string(data[secretKeyToken]))
	t.password = strings.TrimSpace(string(data[secretKeyPassword]))
	if raw, ok := data[secretKeyHeaders]; ok && len(raw) > 0 {
		headers := map[string]string{}
		if err := yaml.Unmarshal(raw, &headers); err != nil {
			// The YAML error may quote the Secret's content: say only where.
			return fmt.Errorf("key %q is not a YAML map of strings", secretKeyHeaders)
		}
		t.headers = headers
	}
	if gitHubAppTypes[t.kind] {
		app, err := githubapp.FromSecret(data)
		if err != nil {
			return err
		}
		t.githubApp = app
	}
	return nil
}

// gitHubAppTypes are the types that may authenticate as a GitHub App, as
// in Flux.
var gitHubAppTypes = map[string]bool{
	notificationv1beta3.GitHubProvider: true, notificationv1beta3.GitHubDispatchProvider: true,
	notificationv1beta3.GitHubPullRequestCommentProvider: true,
}

// proxyFromSecret builds the proxy URL from a proxySecretRef Secret: an
// address, and optionally a username and password.
func proxyFromSecret(data map[string][]byte) (string, error) {
	addr := strings.TrimSpace(string(data[secretKeyAddress]))
	if addr == "" {
		return "", fmt.Errorf("no %q key", secretKeyAddress)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("key %q is not a URL", secretKeyAddress)
	}
	if user := string(data[secretKeyUsername]); user != "" {
		u.User = url.UserPassword(user, string(data[secretKeyPassword]))
	}
	return u.String(), nil
}

func readSecret(ctx context.Context, r client.Reader, namespace, name string) (map[string][]byte, error) {
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("reading secret %s/%s: %w", namespace, name, err)
	}
	return s.Data, nil
}

// redactAddress keeps the scheme and host of a webhook address for logs:
// chat webhooks carry their credential in the path, others in userinfo or
// the query.
func redactAddress(address string) string {
	u, err := url.Parse(address)
	if err != nil || u.Host == "" {
		return "<unparsable address>"
	}
	return u.Scheme + "://" + u.Host
}
