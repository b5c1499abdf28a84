package ops
import ("testing";"os";"strconv")
func init(){ if v:=os.Getenv("GROUPCOLS"); v!="" { groupCols,_ = strconv.Atoi(v) } }
func TestZZGroup(t *testing.T){ t.Log(groupCols) }
