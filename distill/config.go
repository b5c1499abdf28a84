package distill

import "fmt"

// Config is DeiT distillation of a distilled model (deit_*_distilled_*):
// the loss is (1−α)·CE(class head, targets) + α·D with D on the
// distillation head, as facebookresearch/deit's DistillationLoss.
type Config struct {
	// Type is none, soft (KL divergence at temperature Tau) or hard (CE
	// against the teacher's argmax).
	Type  string  `yaml:"type"`
	Alpha float64 `yaml:"alpha"`
	Tau   float64 `yaml:"tau"`
	// PerBatch divides the soft loss by the batch size B instead of by the
	// number of logits B·C.
	PerBatch bool `yaml:"per_batch"`
	// Teacher is a vit-train checkpoint (a ResNet or a ViT), run frozen in
	// evaluation mode on the student's augmented batch.
	Teacher string `yaml:"teacher"`
	// TeacherLogits is a .npy float32 (N, C) file of logits aligned with the
	// training set's item order (vit-train logits); the teacher then saw
	// un-augmented images.
	TeacherLogits string `yaml:"teacher_logits"`
}

// DefaultConfig is no distillation, with DeiT's α = 0.5 and τ = 1 for when
// it is turned on.
func DefaultConfig() Config { return Config{Type: "none", Alpha: 0.5, Tau: 1} }

// Distilling reports whether c trains against a teacher.
func (c Config) Distilling() bool { return c.Type == "soft" || c.Type == "hard" }

// Validate checks the type, α and τ, and that a teacher is given exactly
// when distilling. Errors name the key (distill.type, …) and its value.
func (c Config) Validate() error {
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("config: %s = %v: %s", key, v, want)
	}
	switch {
	case c.Type != "none" && !c.Distilling():
		return bad("distill.type", c.Type, "want none, soft or hard")
	case c.Alpha < 0 || c.Alpha > 1:
		return bad("distill.alpha", c.Alpha, "must be in [0, 1]")
	case !(c.Tau > 0):
		return bad("distill.tau", c.Tau, "must be positive")
	case c.Type == "none" && (c.Teacher != "" || c.TeacherLogits != ""):
		return fmt.Errorf("config: distill.teacher / distill.teacher_logits is set but distill.type = none; set distill.type=soft or hard")
	case c.Type != "none" && c.Teacher == "" && c.TeacherLogits == "":
		return fmt.Errorf("config: distill.type = %s needs distill.teacher (a checkpoint) or distill.teacher_logits (a .npy file)", c.Type)
	case c.Teacher != "" && c.TeacherLogits != "":
		return fmt.Errorf("config: set distill.teacher or distill.teacher_logits, not both")
	}
	return nil
}
