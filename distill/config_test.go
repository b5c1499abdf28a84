package distill

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	ok := []Config{
		DefaultConfig(),
		{Type: "soft", Alpha: 0.5, Tau: 3, Teacher: "t.safetensors"},
		{Type: "hard", Alpha: 1, Tau: 1, TeacherLogits: "t.npy"},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Type: "kl", Alpha: 0.5, Tau: 1, Teacher: "t"}, "distill.type = kl"},
		{Config{Type: "soft", Alpha: 1.5, Tau: 1, Teacher: "t"}, "distill.alpha = 1.5"},
		{Config{Type: "soft", Alpha: -0.1, Tau: 1, Teacher: "t"}, "distill.alpha = -0.1"},
		{Config{Type: "soft", Alpha: 0.5, Tau: 0, Teacher: "t"}, "distill.tau = 0"},
		{Config{Type: "none", Alpha: 0.5, Tau: 1, Teacher: "t"}, "distill.type = none"},
		{Config{Type: "hard", Alpha: 0.5, Tau: 1}, "needs distill.teacher"},
		{Config{Type: "hard", Alpha: 0.5, Tau: 1, Teacher: "a", TeacherLogits: "b"}, "not both"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: want an error containing %q, got %v", c.cfg, c.want, err)
		}
	}
	if !(Config{Type: "soft"}).Distilling() || !(Config{Type: "hard"}).Distilling() || DefaultConfig().Distilling() {
		t.Error("Distilling is true for soft and hard only")
	}
}
