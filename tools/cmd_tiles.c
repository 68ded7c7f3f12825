/* SPDX-License-Identifier: MIT */
/*
 * cmd_tiles.c: `flashcl tiles`: the configuration a plan gets on a device for a problem, and where it
 * came from (tuning database entry, context override, or the heuristic and why). It calls
 * flashcl_context_choose_config, the function plans call, so what it prints is what runs.
 */
#include "cli.h"
#include "commands.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl tiles [options]\n"
            "Prints the tiles a plan gets on a device, with their local memory against the budget the\n"
            "chooser had (the device's limit under FLASHCL_LOCAL_MEM_LIMIT or the policy's cap), the\n"
            "work-groups a compute unit's local memory holds (wg/cu; \"-\" on a CPU, where it bounds\n"
            "nothing), and where they came from. Compiles nothing.\n"
            "  --device SEL     \"P:D\" or a name substring (default: $FLASHCL_DEVICE, a GPU, a CPU)\n"
            "  -d, --dim N      head dim (default 128)\n"
            "  --dtype T        f32, f16 or bf16 (default f32)\n"
            "  --causal         causal mask\n"
            "  --precision P    fp32 data's products: fp32 (default), tf32x3 or tf32 (flash_mma's TF32 tiles;\n"
            "                   see flashcl run --help; with --all the f32 rows only, else fp32 data only)\n"
            "  --fp8 F          fp8 attention: Q, K and V as e4m3 or e5m2 bytes, O in --dtype\n"
            "  -n, --seq N      seq_q = seq_kv = N (default 4096); --seq-q N, --seq-kv N\n"
            "  --gqa R          query heads per kv head (default 1)\n"
            "  --decode         a decode step: seq_q = 1 (unless --seq-q is given)\n"
            "  --all            every supported head dim (8 to 256) x dtype\n"
            "  --build          compile each plan and print what its compiled kernel allows (a driver may\n"
            "                   report less local memory or a smaller work-group than the device promised;\n"
            "                   plans then shrink their tiles); without it nothing is compiled\n"
            "  --path P         flash kernel: auto, portable, mma, decode, wgmma, mfma, wmma or dpas (see flashcl run\n"
            "                   --help)\n"
            CLI_CONFIG_HELP("    ", "                   ")
            "  --json           machine-readable output\n"
            "Each line ends with the kernel's path and why: the matrix units (flash_wgmma, flash_mma,\n"
            "flash_decode_mma on NVIDIA; flash_mfma, flash_wmma on AMD; flash_dpas on Intel),\n"
            "the decode kernel (flash_decode) or the portable kernel (flash_fwd), and what decided it.\n"
            "exit status: 0 ok, 1 a flashcl error, 2 bad usage\n");
}

/* Work-groups of this config a compute unit's local memory holds (occupancy by local memory alone;
 * registers may allow fewer); -1 where that is not defined: on a CPU (a compute unit is a core that runs
 * work-groups one after another, their local memory ordinary memory) and for tiles without local memory. */
static long long groups_per_cu(const flashcl_device_profile *pr, const flashcl_config *c)
{
    const uint64_t cu = pr->local_mem_per_cu ? pr->local_mem_per_cu : pr->local_mem_size;
    return pr->is_cpu || !c->local_mem_bytes ? -1 : (long long)(cu / c->local_mem_bytes);
}

static const char *no_groups_per_cu(const flashcl_device_profile *pr)
{
    return pr->is_cpu ? "a CPU: each compute unit (a core) runs work-groups one after another, local memory is "
                        "ordinary memory and bounds none of them"
                      : "these tiles take no local memory";
}

static void print_json(const flashcl_device_profile *pr, const flashcl_problem *p, const flashcl_config *c,
                       flashcl_status st, const char *err, int first)
{
    printf("%s\n  {\"head_dim\": %d, \"dtype\": \"%s\", \"causal\": %s, \"seq_q\": %d, \"seq_kv\": %d, "
           "\"heads_q\": %d, \"heads_kv\": %d, ",
           first ? "" : ",", p->head_dim, flashcl_dtype_name(p->dtype), p->causal ? "true" : "false", p->seq_q,
           p->seq_kv, p->heads_q, p->heads_kv);
    if (st != FLASHCL_SUCCESS) {
        printf("\"error\": ");
        cli_json_string(stdout, err);
        printf("}");
        return;
    }
    printf("\"kernel\": \"%s\", \"block_m\": %d, \"block_n\": %d, \"threads_per_row\": %d, \"rows_per_item\": %d, "
           "\"d_chunk\": %d, \"v_chunk\": %d, \"kv_splits\": %d, \"gqa_pack\": %d, "
           "\"work_group_size\": %d, \"local_mem_bytes\": %llu, \"local_mem_budget\": %llu, "
           "\"groups_per_cu_by_local_mem\": ",
           c->kernel_name, c->block_m, c->block_n, c->threads_per_row, c->rows_per_item, c->d_chunk, c->v_chunk, c->kv_splits, c->gqa_pack,
           c->work_group_size,
           (unsigned long long)c->local_mem_bytes, (unsigned long long)c->local_mem_budget);
    if (groups_per_cu(pr, c) >= 0) {
        printf("%lld", groups_per_cu(pr, c));
    } else {
        printf("null, \"groups_per_cu_note\": ");
        cli_json_string(stdout, no_groups_per_cu(pr));
    }
    printf(", \"source\": ");
    cli_json_string(stdout, c->source);
    printf(", \"reason\": ");
    cli_json_string(stdout, c->reason);
    printf(", \"module\": \"%s\", \"emulated\": %d, \"kv_stages\": %d, \"m_tiles\": %d, \"producer\": %d, "
           "\"team\": %d, \"keys_per_step\": %d, \"shuffles\": %d, \"tf32\": %d, \"persistent\": %d, \"path_reason\": ",
           flashcl_kernel_name(c->kernel), c->emulated, c->kv_stages, c->m_tiles, c->producer, c->team,
           c->keys_per_step, c->shuffles, c->tf32, c->persistent);
    cli_json_string(stdout, c->path_reason);
    printf("}");
}

enum { OPT_DTYPE = CLI_OPT_BASE, OPT_SEQ_Q, OPT_SEQ_KV, OPT_GQA, OPT_DECODE, OPT_ALL, OPT_BUILD, OPT_JSON, OPT_PATH,
       OPT_DEVICE, OPT_CAUSAL, OPT_PRECISION, OPT_FP8 };

static const struct option longopts[] = {
    {"dim", required_argument, NULL, 'd'}, {"dtype", required_argument, NULL, OPT_DTYPE},
    {"seq", required_argument, NULL, 'n'}, {"seq-q", required_argument, NULL, OPT_SEQ_Q},
    {"seq-kv", required_argument, NULL, OPT_SEQ_KV}, {"gqa", required_argument, NULL, OPT_GQA},
    {"causal", no_argument, NULL, OPT_CAUSAL}, {"decode", no_argument, NULL, OPT_DECODE},
    {"all", no_argument, NULL, OPT_ALL}, {"build", no_argument, NULL, OPT_BUILD},
    {"json", no_argument, NULL, OPT_JSON}, {"path", required_argument, NULL, OPT_PATH},
    {"device", required_argument, NULL, OPT_DEVICE}, {"precision", required_argument, NULL, OPT_PRECISION},
    {"fp8", required_argument, NULL, OPT_FP8}, CLI_CONFIG_LONGOPT, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

typedef struct tiles_opts {
    const char *device;
    int all, json, build, has_config;
    long gqa;
    flashcl_settings settings;
    flashcl_problem p;
    flashcl_config config; /* --config */
} tiles_opts;

/* One option's value into *o; 0 after a message on a bad value. */
static int parse_value(int c, const char *val, tiles_opts *o, long seq[2])
{
    long v;
    switch (c) {
    case 'd':
        if (!cli_int("--dim", val, 1, 100000, &v))
            return 0;
        o->p.head_dim = (int32_t)v;
        return 1;
    case OPT_DTYPE: return cli_dtype(val, &o->p.dtype);
    case 'n':
        if (!cli_int("--seq", val, 1, 1L << 30, &v))
            return 0;
        o->p.seq_q = o->p.seq_kv = (int32_t)v;
        return 1;
    case OPT_SEQ_Q: case OPT_SEQ_KV: return cli_int(cli_option_name(longopts, c), val, 1, 1L << 30, &seq[c == OPT_SEQ_KV]);
    case OPT_GQA: return cli_int("--gqa", val, 1, 1024, &o->gqa);
    case OPT_PRECISION: return cli_mask_option("tiles", CLI_OPT_PRECISION, val, &o->p);
    case OPT_FP8: return cli_mask_option("tiles", CLI_OPT_FP8, val, &o->p);
    case CLI_OPT_CONFIG: return (o->has_config = cli_config("tiles", val, &o->config));
    case OPT_PATH: {
        flashcl_path fp;
        if (flashcl_path_parse(val, &fp) != FLASHCL_SUCCESS) {
            fprintf(stderr, "flashcl tiles: --path %s: expected auto, portable, mma, decode, wgmma, mfma, wmma or dpas\n", val);
            return 0;
        }
        o->settings.path = (int)fp;
        return 1;
    }
    }
    return 0;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv, tiles_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gqa = 1;
    flashcl_settings_default(&o->settings);
    flashcl_problem_default(&o->p);
    o->p.head_dim = 128;
    o->p.seq_q = o->p.seq_kv = 4096;
    char seen[CLI_OPT_END] = {0};
    long seq[2] = {0, 0}; /* --seq-q, --seq-kv: over -n, in whichever order */
    for (int c; (c = cli_getopt("tiles", argc, argv, "d:n:h", longopts)) != -1;) {
        if (c == CLI_BAD_OPTION)
            return 2;
        seen[c] = 1;
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_CAUSAL: o->p.causal = 1; break;
        case OPT_DECODE: break;
        case OPT_ALL: o->all = 1; break;
        case OPT_BUILD: o->build = 1; break;
        case OPT_JSON: o->json = 1; break;
        default:
            if (!parse_value(c, optarg, o, seq))
                return 2;
        }
    }
    if (o->all && (seen['d'] || seen[OPT_DTYPE]))
        return cli_conflict("tiles", "--all", seen['d'] ? "--dim (-d)" : "--dtype", "--all covers every head dim and dtype");
    if (seen['n'] && seq[0] && seq[1])
        return cli_conflict("tiles", "--seq (-n)", "--seq-q with --seq-kv", "-n sets both lengths");
    o->p.seq_q = seq[0] ? (int32_t)seq[0] : seen[OPT_DECODE] ? 1 : o->p.seq_q; /* (--decode: 1 unless --seq-q) */
    o->p.seq_kv = seq[1] ? (int32_t)seq[1] : o->p.seq_kv;
    o->p.heads_kv = 1;
    o->p.heads_q = (int32_t)o->gqa;
    return -1;
}

int cmd_tiles(int argc, char **argv)
{
    tiles_opts o;
    const int parsed = parse(argc, argv, &o);
    if (parsed >= 0)
        return parsed;
    flashcl_problem p = o.p; /* (its head dim and dtype change under --all) */

    flashcl_context *ctx = NULL;
    flashcl_status st = flashcl_context_create_default(o.device, &o.settings, &ctx);
    if (st)
        return cli_fail(NULL, "opening a device", st);
    if (cli_apply_config(ctx, o.has_config, &o.config)) {
        flashcl_context_destroy(&ctx);
        return 1;
    }
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    const flashcl_tuning_db *db = flashcl_context_tuning_db(ctx);
    flashcl_policy policy;
    flashcl_context_policy(ctx, &policy);
    const unsigned long long budget = cli_tile_budget(pr, &policy);
    const char *warnings = flashcl_tuning_db_warnings(db);
    if (*warnings)
        fprintf(stderr, "flashcl: tuning database:\n%s", warnings);

    int rc = 0;
    const int d_first = o.all ? 8 : p.head_dim, d_last = o.all ? 256 : p.head_dim;
    const int t_first = o.all ? 0 : (int)p.dtype, t_last = o.all ? 2 : (int)p.dtype;
    if (o.json) {
        printf("{\"device\": ");
        cli_json_string(stdout, pr->name);
        printf(", \"platform\": ");
        cli_json_string(stdout, pr->platform_name);
        printf(", \"vendor\": \"%s\", \"arch\": ", flashcl_vendor_name(pr->vendor));
        cli_json_string(stdout, pr->arch);
        printf(", \"local_mem_size\": %llu, \"local_mem_static\": %llu, \"local_mem_per_cu\": %llu, "
               "\"local_mem_budget\": %llu, \"max_work_group_size\": %zu, "
               "\"wg_multiple\": %zu, \"matrix_units\": %s, \"path\": \"%s\", \"tuning_db\": ",
               (unsigned long long)pr->local_mem_size, (unsigned long long)pr->local_mem_static,
               (unsigned long long)pr->local_mem_per_cu, budget, pr->max_work_group_size, pr->wg_multiple,
               pr->matrix_units ? "true" : "false", flashcl_path_name((flashcl_path)policy.path));
        cli_json_string(stdout, flashcl_tuning_db_user_path(db));
        printf(", \"configs\": [");
    } else {
        printf("device   %s / %s [%s%s%s]\n", pr->platform_name, pr->name, flashcl_vendor_name(pr->vendor),
               pr->arch[0] ? ", " : "", pr->arch);
        printf("limits   local memory %llu B", (unsigned long long)pr->local_mem_size);
        if (pr->local_mem_static != pr->local_mem_size)
            printf(" reported, %llu B in static arrays (compile probes), %llu B a compute unit",
                   (unsigned long long)pr->local_mem_static, (unsigned long long)pr->local_mem_per_cu);
        printf(" (budget for tiles %llu B), work-group %zu, multiple %zu; matrix units %s\n", budget, pr->max_work_group_size, pr->wg_multiple,
               pr->matrix_units ? "yes" : "no");
        printf("policy   path %s\n", flashcl_path_name((flashcl_path)policy.path));
        const char *user = flashcl_tuning_db_user_path(db);
        printf("tuning   %zu database entries; user file %s%s\n", flashcl_tuning_db_size(db), user ? user : "(none)",
               user && access(user, F_OK) != 0 ? " (not there yet: flashcl tune writes it)" : "");
        printf("problem  Sq=%d Sk=%d Hq/Hkv=%ld %s%s\n", p.seq_q, p.seq_kv, o.gqa, p.causal ? "causal " : "",
               p.seq_q <= 16 ? "decode" : "prefill");
        printf("%s\n\n", o.build ? "checked against each compiled kernel (--build)"
                               : "as chosen before compiling (--build checks them against the compiled kernel)");
        printf("%-4s %-5s %-16s %7s %7s %4s %4s %6s %6s %6s %5s %16s %5s  %s\n", "d", "dtype", "kernel", "block_m",
               "block_n", "tpr", "rows", "dchunk", "vchunk", "splits", "wg", "local/budget B", "wg/cu", "source: reason");
    }
    int first = 1, undefined_groups = 0;
    for (int d = d_first; d <= d_last; d += 8)
        for (int t = t_first; t <= t_last; ++t) {
            p.head_dim = d;
            p.dtype = (flashcl_dtype)t;
            /* (--all: the f32 rows only; one problem asked for takes it as given, refused as run refuses it) */
            p.precision = t == FLASHCL_DTYPE_F32 || !o.all ? o.p.precision : FLASHCL_PRECISION_FP32;
            p.qkv_format = o.p.qkv_format;
            flashcl_config c;
            if (o.build) {
                flashcl_plan *plan = NULL;
                st = flashcl_plan_create(ctx, &p, &plan);
                if (!st)
                    flashcl_plan_config(plan, &c);
                flashcl_plan_destroy(&plan);
            } else {
                st = flashcl_context_choose_config(ctx, &p, FLASHCL_ALGO_FLASH, &c);
            }
            const char *err = flashcl_context_last_error(ctx);
            if (st)
                rc = 1;
            if (o.json) {
                print_json(pr, &p, &c, st, err, first);
            } else if (st) {
                printf("%-4d %-5s error: %s\n", d, flashcl_dtype_name(p.dtype), err);
                if (!o.all) /* (one problem asked for: its refusal is the command's error, on stderr too) */
                    fprintf(stderr, "flashcl tiles: %s (%s)\n", err, flashcl_status_name(st));
            } else {
                char local[48], groups[24] = "-";
                /* (against what the chooser was allowed: the device's limit under the policy's cap) */
                snprintf(local, sizeof local, "%llu/%llu", (unsigned long long)c.local_mem_bytes,
                         (unsigned long long)c.local_mem_budget);
                if (groups_per_cu(pr, &c) >= 0)
                    snprintf(groups, sizeof groups, "%lld", groups_per_cu(pr, &c));
                else
                    undefined_groups = 1;
                printf("%-4d %-5s %-16s %7d %7d %4d %4d %6d %6d %6d %5d %16s %5s  %s: %s\n", d,
                       flashcl_dtype_name(p.dtype), c.kernel_name, c.block_m, c.block_n, c.threads_per_row, c.rows_per_item,
                       c.d_chunk, c.v_chunk, c.kv_splits, c.work_group_size, local, groups, c.source, c.reason);
                printf("%-16s path: %s\n", "", c.path_reason);
            }
            first = 0;
        }
    if (o.json)
        printf("\n]}\n");
    else if (undefined_groups)
        printf("\nwg/cu -: %s\n", no_groups_per_cu(pr));
    flashcl_context_destroy(&ctx);
    return rc;
}
