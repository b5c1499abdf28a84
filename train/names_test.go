package train

import (
	"strings"
	"testing"

	"github.com/vit-train/vit-train/internal/layered"
	"github.com/vit-train/vit-train/optim"
)

// TestUnknownScheduleIsAnError builds the schedule of a name the table does
// not hold, past Validate (as a caller of NewStepper may): it is an error
// naming the setting and the value, not a constant rate.
func TestUnknownScheduleIsAnError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sched.Name = "linear"
	s, err := newSchedule(cfg, 10, 1)
	if err == nil || !strings.Contains(err.Error(), `sched.name = "linear": want cosine, step or constant`) {
		t.Fatalf("schedule %v, error %v; want an error naming sched.name and its names", s, err)
	}
}

// TestAugTrainIsValidated sets aug.train to a name no pipeline has: the
// configuration is refused, naming the setting, the value and the names.
func TestAugTrainIsValidated(t *testing.T) {
	_, err := loadConfig("", []string{"aug.train=padcrop"})
	if err == nil || !strings.Contains(err.Error(), `aug.train = "padcrop": want padcrop-flip, rrc-flip or none`) {
		t.Fatalf("error %v, want one naming aug.train and its names", err)
	}
}

// TestEveryListedNameIsAccepted sets each name that Choices lists (the
// help text's names) and validates the configuration: the names help
// lists are the names Validate takes.
func TestEveryListedNameIsAccepted(t *testing.T) {
	prefer := map[string][]string{
		// Keys that another setting makes ineffective at the defaults.
		"aug.train": {"model.img_size=32"},
	}
	for _, c := range Choices() {
		if len(c.Names) == 0 {
			t.Errorf("%s lists no names", c.Key)
		}
		for _, name := range c.Names {
			sets := append([]string{c.Key + "=" + name}, prefer[c.Key]...)
			if _, err := loadConfig("", sets); err != nil {
				t.Errorf("%s=%s: %v", c.Key, name, err)
			}
		}
		if _, err := loadConfig("", []string{c.Key + "=nonesuch"}); err == nil || !strings.Contains(err.Error(), c.Key+` = "nonesuch": want `) {
			t.Errorf("%s=nonesuch: error %v, want one naming the setting and its names", c.Key, err)
		}
	}
}

// TestEveryNameBuilds builds what each optimiser, schedule and training
// pipeline name builds, and refuses an unknown one in every builder with
// the same error Validate gives.
func TestEveryNameBuilds(t *testing.T) {
	params := []optim.Param{{Name: "w", Shape: []int{2}, Data: []float32{1, 2}}}
	groups := []optim.Group{{Name: "all", LRScale: 1, Params: []int{0}}}
	for _, name := range optimizers.names() {
		cfg := DefaultConfig().Optim
		cfg.Name = name
		build, err := optimizers.lookup(name)
		if err == nil {
			_, err = build(cfg, params, groups)
		}
		if err != nil {
			t.Errorf("optim.name=%s: %v", name, err)
		}
	}
	for _, name := range schedules.names() {
		cfg := DefaultConfig()
		cfg.Sched.Name = name
		if _, err := newSchedule(cfg, 10, 1); err != nil {
			t.Errorf("sched.name=%s: %v", name, err)
		}
	}
	for _, name := range trainPipelines.names() {
		if _, _, err := Pipelines(AugConfig{Train: name, CropPct: 0.875}, 28, []float32{0.5}, []float32{0.5}); err != nil {
			t.Errorf("aug.train=%s: %v", name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Optim.Name, cfg.Data.Dataset, cfg.Aug.Train = "lamb", "imagenet", "autoaugment"
	want := cfg.checkNames().Error()
	if !strings.Contains(want, `optim.name = "lamb"`) {
		t.Fatalf("checkNames: %s, want the optimiser named", want)
	}
	if _, err := optimizers.lookup(cfg.Optim.Name); err == nil || err.Error() != want {
		t.Errorf("optimizers.lookup: %v, want %s", err, want)
	}
	if _, err := OpenDatasets(cfg.Data); err == nil || !strings.Contains(err.Error(), `data.dataset = "imagenet": want fashion-mnist-embedded, `) {
		t.Errorf("OpenDatasets: %v", err)
	}
	if _, _, err := Pipelines(cfg.Aug, 28, []float32{0.5}, []float32{0.5}); err == nil || !strings.Contains(err.Error(), `aug.train = "autoaugment": want `) {
		t.Errorf("Pipelines: %v", err)
	}
}

// TestUnreadSettingsComeFromTheTable checks that a key some names of a
// table read is refused, when set, for the names that do not read it, and
// only for those.
func TestUnreadSettingsComeFromTheTable(t *testing.T) {
	table := choices[int]{key: "optim.name", list: []choice[int]{
		{"a", 0, []string{"optim.beta1"}}, {"b", 0, nil}, {"c", 0, []string{"optim.beta1", "optim.eps"}}}}
	cfg := DefaultConfig()
	cfg.Optim.Beta1 = 0.5
	now, defaults := layered.Of(cfg), layered.Of(DefaultConfig())
	got := table.unread("b", now, defaults)
	if len(got) != 2 || got[0].key != "optim.beta1" || got[0].value != 0.5 || !got[0].set || got[1].key != "optim.eps" || got[1].set {
		t.Fatalf("unread by b: %+v", got)
	}
	if want := "optim.name = b does not read it (a or c do)"; got[0].why != want {
		t.Errorf("why %q, want %q", got[0].why, want)
	}
	if got := table.unread("a", now, defaults); len(got) != 1 || got[0].key != "optim.eps" || got[0].set {
		t.Errorf("unread by a: %+v", got)
	}
	if got := table.unread("c", now, defaults); len(got) != 0 {
		t.Errorf("unread by c: %+v", got)
	}
}
