package manifests

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dockerConfigEntry is one registry's credentials in a .dockerconfigjson,
// fields in the order the flux CLI writes them.
type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

// DockerConfigJSON is the .dockerconfigjson of one registry server's
// username and password.
func DockerConfigJSON(server, username, password string) ([]byte, error) {
	return json.Marshal(map[string]any{"auths": map[string]dockerConfigEntry{server: {
		Username: username, Password: password,
		Auth: base64.StdEncoding.EncodeToString([]byte(username + ":" + password)),
	}}})
}

// PullSecret is the image pull Secret of --registry-creds: a
// kubernetes.io/dockerconfigjson Secret named ImagePullSecret for the
// registry's host. It holds credentials, so it is applied to the cluster
// and never exported or committed. nil when RegistryCredential is empty.
func (o Options) PullSecret() (*unstructured.Unstructured, error) {
	if o.RegistryCredential == "" {
		return nil, nil
	}
	if o.ImagePullSecret == "" {
		return nil, errors.New("--registry-creds requires --image-pull-secret to be set")
	}
	user, pass, ok := strings.Cut(o.RegistryCredential, ":")
	if !ok || user == "" || pass == "" {
		return nil, errors.New("--registry-creds must be in the format 'user:password'")
	}
	server, _, _ := strings.Cut(strings.TrimSuffix(o.Registry, "/"), "/")
	cfg, err := DockerConfigJSON(server, user, pass)
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: o.ImagePullSecret, Namespace: o.Namespace, Labels: generator{opts: o}.labels("")},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
	u, err := toUnstructured(s)
	if err != nil {
		return nil, fmt.Errorf("image pull secret: %w", err)
	}
	return u, nil
}
