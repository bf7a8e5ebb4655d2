// cf_coalesce.cpp - an LLVM 19 pass plugin that checks a run of accesses to one object once.
//
// A clang profile build instruments every load and store with a call of
// __sanitizer_cov_loadN/storeN(p) (step 1, cachefit.trace.sancov_inline) and compiles
// the bitcode again with those callbacks' inline definitions linked in (step 2).  This
// plugin runs in step 2 only, at the start of the pipeline (before the inliner inlines the
// callbacks).  In each basic block it finds *runs*: maximal sequences of at least two
// sancov calls whose pointers are one base value plus a constant offset (the offset
// and the offset plus the size fit in int32), with no other call or invoke between them (debug intrinsics do not count), no
// sancov call of another base between them, and at most CF_RUN_MAX members.  A run is
// replaced by ONE call, at the position and with the DebugLoc of its first member, of
//
//     void __cachefit_run(const volatile void *base, const struct cf_run_desc *desc);
//
// and its member calls are erased.  `desc` is a private unnamed_addr constant of the C
// layout below (runtime/inline/cf_sancov_inline.c and runtime/src/cf_sancov.c define it;
// keep them in sync):
//
//     struct cf_run_desc { uint32_t n; int32_t lo; int32_t hi; uint32_t zero;
//                          uint64_t member[]; };
//     _Static_assert(offsetof(struct cf_run_desc, lo) == 4, "");
//     _Static_assert(offsetof(struct cf_run_desc, hi) == 8, "");
//     _Static_assert(offsetof(struct cf_run_desc, member) == 16, "");
//     _Static_assert(_Alignof(struct cf_run_desc) == 8, "");
//
// member[i] = (uint64_t)(uint32_t)offset_i | (uint64_t)size_i << 32 | (uint64_t)is_store << 63,
// in program order; lo = min offset_i, hi = max(offset_i + size_i).  Because the members
// keep their order and nothing that could change the runtime's state (a call) lies between
// them, the runtime records exactly the quads the member calls would have recorded.
//
// The pass changes nothing else: it does not move loads or stores, does not touch a call
// that is not a sancov callback, and leaves blocks without runs as they are.  Whether it is
// used at all is the Python side's choice (cachefit.trace.pass_plugin, CACHEFIT_COALESCE).

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Compiler.h"

using namespace llvm;

namespace {

constexpr unsigned CF_RUN_MAX = 16;
constexpr const char *RUN_FN = "__cachefit_run";
constexpr const char *DESC_NAME = "__cachefit_run_desc";

struct Member {
    CallBase *call;
    int32_t offset;
    uint32_t size;
    bool store;
};

struct Run {
    Value *base;
    std::vector<Member> members;
};

// The access size and kind of a call of __sanitizer_cov_{load,store}{1,2,4,8,16}(ptr).
std::optional<std::pair<uint32_t, bool>> sancovCallee(const CallBase &cb) {
    const Function *f = cb.getCalledFunction();
    if (!f || cb.arg_size() != 1 || !cb.getArgOperand(0)->getType()->isPointerTy())
        return std::nullopt;
    StringRef name = f->getName();
    if (!name.consume_front("__sanitizer_cov_"))
        return std::nullopt;
    bool store;
    if (name.consume_front("load"))
        store = false;
    else if (name.consume_front("store"))
        store = true;
    else
        return std::nullopt;
    uint32_t size;
    if (name.getAsInteger(10, size) || (size != 1 && size != 2 && size != 4 && size != 8 &&
                                        size != 16))
        return std::nullopt;
    return std::make_pair(size, store);
}

// The runs of one basic block, in order.
std::vector<Run> findRuns(BasicBlock &bb, const DataLayout &dl) {
    std::vector<Run> runs;
    Run cur{nullptr, {}};
    auto close = [&]() {
        if (cur.members.size() >= 2)
            runs.push_back(cur);
        cur = Run{nullptr, {}};
    };
    for (Instruction &inst : bb) {
        auto *cb = dyn_cast<CallBase>(&inst);
        if (!cb || isa<DbgInfoIntrinsic>(cb))
            continue;
        auto sc = sancovCallee(*cb);
        if (!sc) {
            close();   // any other call, memory intrinsics included, ends a run
            continue;
        }
        Value *p = cb->getArgOperand(0);
        APInt off(dl.getIndexTypeSizeInBits(p->getType()), 0);
        Value *base = p->stripAndAccumulateConstantOffsets(dl, off, /*AllowNonInbounds=*/true);
        // The offset and the end of the access fit in int32 (desc's lo and hi).
        bool fits = off.isSignedIntN(32) && off.getSExtValue() + sc->first <= INT32_MAX &&
                    base->getType() == p->getType();
        if (!fits || base != cur.base || cur.members.size() == CF_RUN_MAX)
            close();
        if (!fits)
            continue;   // a sancov call that cannot join a run still ends the one before
        cur.base = base;
        cur.members.push_back(
            Member{cb, static_cast<int32_t>(off.getSExtValue()), sc->first, sc->second});
    }
    close();
    return runs;
}

class Coalescer {
  public:
    explicit Coalescer(Module &m)
        : m_(m), ctx_(m.getContext()), i32_(Type::getInt32Ty(ctx_)),
          i64_(Type::getInt64Ty(ctx_)), ptr_(PointerType::get(ctx_, 0)) {}

    // False when the module already declares __cachefit_run with another type.
    bool prepare() {
        FunctionType *ty = FunctionType::get(Type::getVoidTy(ctx_), {ptr_, ptr_}, false);
        if (Function *existing = m_.getFunction(RUN_FN)) {
            if (existing->getFunctionType() != ty)
                return false;
            fn_ = FunctionCallee(ty, existing);
            return true;
        }
        Function *f = Function::Create(ty, GlobalValue::ExternalLinkage, RUN_FN, m_);
        f->addFnAttr(Attribute::NoUnwind);
        fn_ = FunctionCallee(ty, f);
        return true;
    }

    void rewrite(const Run &run) {
        CallBase *first = run.members.front().call;
        IRBuilder<> b(first);
        CallInst *call = b.CreateCall(fn_, {run.base, desc(run)});
        call->setDebugLoc(first->getDebugLoc());
        for (const Member &mb : run.members)
            mb.call->eraseFromParent();
    }

  private:
    GlobalVariable *desc(const Run &run) {
        std::vector<uint64_t> words;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (const Member &mb : run.members) {
            words.push_back(uint64_t(uint32_t(mb.offset)) | uint64_t(mb.size) << 32 |
                            uint64_t(mb.store) << 63);
            lo = std::min<int64_t>(lo, mb.offset);
            hi = std::max<int64_t>(hi, int64_t(mb.offset) + mb.size);
        }
        auto found = descs_.find(words);
        if (found != descs_.end())
            return found->second;
        std::vector<Constant *> elems;
        for (uint64_t w : words)
            elems.push_back(ConstantInt::get(i64_, w));
        ArrayType *arr = ArrayType::get(i64_, words.size());
        Constant *init = ConstantStruct::getAnon(
            ctx_, {ConstantInt::get(i32_, words.size()), ConstantInt::get(i32_, uint64_t(lo)),
                   ConstantInt::get(i32_, uint64_t(hi)), ConstantInt::get(i32_, 0),
                   ConstantArray::get(arr, elems)});
        auto *gv = new GlobalVariable(m_, init->getType(), /*isConstant=*/true,
                                      GlobalValue::PrivateLinkage, init, DESC_NAME);
        gv->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
        gv->setAlignment(Align(8));
        descs_.emplace(std::move(words), gv);
        return gv;
    }

    Module &m_;
    LLVMContext &ctx_;
    IntegerType *i32_;
    IntegerType *i64_;
    PointerType *ptr_;
    FunctionCallee fn_;
    std::map<std::vector<uint64_t>, GlobalVariable *> descs_;
};

struct CoalescePass : PassInfoMixin<CoalescePass> {
    PreservedAnalyses run(Module &m, ModuleAnalysisManager &) {
        const DataLayout &dl = m.getDataLayout();
        std::vector<Run> runs;
        for (Function &f : m) {
            if (f.isDeclaration())
                continue;
            for (BasicBlock &bb : f) {
                std::vector<Run> r = findRuns(bb, dl);
                runs.insert(runs.end(), r.begin(), r.end());
            }
        }
        if (runs.empty())
            return PreservedAnalyses::all();
        Coalescer c(m);
        if (!c.prepare())
            return PreservedAnalyses::all();
        for (const Run &run : runs)
            c.rewrite(run);
        return PreservedAnalyses::none();
    }
    // Run in optnone (-O0) functions too: the profile does not depend on it either way.
    static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "cf-coalesce", "1", [](PassBuilder &pb) {
                pb.registerPipelineStartEPCallback(
                    [](ModulePassManager &mpm, OptimizationLevel) {
                        mpm.addPass(CoalescePass());
                    });
                // `opt -load-pass-plugin=... -passes=cf-coalesce`, for looking at it alone.
                pb.registerPipelineParsingCallback(
                    [](StringRef name, ModulePassManager &mpm,
                       ArrayRef<PassBuilder::PipelineElement>) {
                        if (name != "cf-coalesce")
                            return false;
                        mpm.addPass(CoalescePass());
                        return true;
                    });
            }};
}
