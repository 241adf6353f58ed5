"""Test-session configuration shared by every test module.

The ``slow`` marker (registered in pyproject.toml) is applied here, from one
list, so that ``python -m pytest -m "not slow" -q`` is a quick inner loop
(about 45 s of CPU on this project's 2-core machine, against about 330 s
for everything) while CI runs everything with ``python -m pytest -q``.  The list is kept here rather than as decorators so
it can be revised from a ``--durations`` run without touching the test files.

A test belongs in :data:`SLOW` when one run of it (all its parametrisations,
plus its module fixtures' setup) takes about half a second of wall time or
more on a loaded 2-core machine, or when it is a costly invariance check
(workers, chunk budgets, reruns) beside faster tests of the same numbers;
:data:`SLOW_MODULES` are modules whose
shared fixture (a rendered report) dominates every test in them.  Tests can
also carry ``@pytest.mark.slow`` themselves.  When the whole suite is
collected (no path arguments), a name here that matches no test of a
collected module is an error, so the list cannot silently go stale.
"""

from __future__ import annotations

import pytest

#: Modules whose every test is slow (they share one expensive rendered report).
SLOW_MODULES = frozenset({
    "tests/test_report.py",
    "tests/test_report_browser.py",
})

#: ``path::function`` (every parametrisation) or a doctest file's node id.
SLOW = frozenset({
    "docs/diagnostics.md::diagnostics.md",
    "docs/perturb.md::perturb.md",
    "docs/preferences.md::preferences.md",
    "docs/report.md::report.md",
    "docs/validity.md::validity.md",
    "tests/test_acc_eq_stream.py::test_acc_eq_global_within_a_memory_limit_gives_the_right_number_regression_14_1",
    "tests/test_acc_eq_stream.py::test_acc_eq_out_of_memory_is_a_clear_error_never_a_number_regression_14_1",
    "tests/test_acc_eq_stream.py::test_dup_pairs_are_left_out_like_brute_force",
    "tests/test_acc_eq_stream.py::test_shared_human_batch_of_one",
    "tests/test_acc_eq_stream.py::test_streaming_tie_calibration_equals_brute_force",
    "tests/test_acc_eq_stream.py::test_streaming_tie_calibration_equals_the_full_sweep",
    "tests/test_acc_eq_stream.py::test_streaming_tie_calibration_on_larger_continuous_and_tied_data",
    "tests/test_asr.py::test_import_metaeval_does_not_load_jiwer_or_ir_measures",
    "tests/test_asr.py::test_reader_on_real_ceasr_rows_matches_jiwer_per_sentence",
    "tests/test_asr.py::test_scores_are_cached_and_reused",
    "tests/test_bootstrap_duplicates.py::test_bootstrap_interval_of_acc_23_covers_the_population_value",
    "tests/test_bootstrap_duplicates.py::test_replicates_match_slow_reference_without_same_original_pairs",
    "tests/test_checkpoint.py::test_corrupt_unit_cli_exit_2_names_the_file",
    "tests/test_checkpoint.py::test_corrupt_unit_is_a_named_error",
    "tests/test_checkpoint.py::test_planted_pickle_unit_does_not_execute",
    "tests/test_checkpoint.py::test_run_json_deleted_other_n_resamples_units_not_reused",
    "tests/test_chunking.py::test_compare_all_is_bit_identical_for_any_budget_and_n_jobs",
    "tests/test_chunking.py::test_compare_is_bit_identical_for_any_budget",
    "tests/test_chunking.py::test_correlate_is_bit_identical_for_any_budget_and_n_jobs",
    "tests/test_chunking.py::test_discriminative_power_is_bit_identical_for_any_budget_and_n_jobs",
    "tests/test_chunking.py::test_memory_budget_from_the_environment_gives_the_same_numbers",
    "tests/test_chunking.py::test_ranking_consistency_is_bit_identical_for_any_budget",
    "tests/test_cli.py::test_console_script_in_a_subprocess",
    "tests/test_cli_diagnose.py::test_diagnose_matches_library",
    "tests/test_cli_diagnose.py::test_diagnose_reference_sensitivity_from_texts",
    "tests/test_cli_local.py::test_local_human_pairs_match_the_library",
    "tests/test_cli_measures.py::test_measures_csv_matches_library",
    "tests/test_cli_measures.py::test_measures_out_folder_and_resume",
    "tests/test_cli_reliability.py::test_reliability_csv_matches_library",
    "tests/test_cli_simulate.py::test_simulate_grid_csv_matches_library",
    "tests/test_cli_validity.py::test_cfa_not_converged_is_flagged_everywhere_and_drives_nothing",
    "tests/test_cli_validity.py::test_validity_outputs_match_library",
    "tests/test_clusters.py::test_compare_all_clusters_mtme_uses_count_over_n",
    "tests/test_clusters.py::test_mtme_pvalue_equals_permutation_sig_diff",
    "tests/test_coefficients.py::test_every_batched_coefficient_matches_the_reference",
    "tests/test_coefficients.py::test_kendall_paths_agree_around_both_switches",
    "tests/test_coefficients.py::test_kendall_stats_numba_twin_and_reference_agree",
    "tests/test_coefficients.py::test_kernels_accept_broadcast_views",
    "tests/test_coefficients.py::test_knight_path_matches_reference_around_the_switch",
    "tests/test_coefficients.py::test_knight_path_on_adversarial_groups",
    "tests/test_coefficients.py::test_tie_calibration_matches_brute_force",
    "tests/test_coefficients.py::test_tie_calibration_value_equals_acc23_recounted_at_each_threshold",
    "tests/test_compare.py::test_clusters_default_to_holm_unless_mt_metrics_eval_rule_is_asked",
    "tests/test_compare.py::test_clusters_use_the_adjusted_pvalues",
    "tests/test_compare.py::test_compare_all_does_not_depend_on_n_jobs_or_the_other_metrics",
    "tests/test_compare.py::test_compare_all_with_williams_and_bootstrap",
    "tests/test_compare.py::test_compare_at_input_level_uses_the_groups_where_both_are_defined",
    "tests/test_compare.py::test_metric_against_itself_for_other_statistics",
    "tests/test_compare.py::test_metric_against_itself_gives_delta_zero_and_p_one",
    "tests/test_compare.py::test_property_compare_errors_cleanly_or_gives_valid_pvalues",
    "tests/test_compare.py::test_williams_closed_form",
    "tests/test_compare.py::test_williams_equals_nlpstats",
    "tests/test_correlate.py::test_bootstrap_and_permutation_draw_from_one_stream_in_order",
    "tests/test_correlate.py::test_per_metric_numbers_do_not_depend_on_the_other_metrics_or_their_order",
    "tests/test_correlate.py::test_permutation_pvalue_is_uniform_under_the_null",
    "tests/test_correlate.py::test_property_correlate_errors_cleanly_or_matches_reference",
    "tests/test_correlate.py::test_results_do_not_depend_on_n_jobs",
    "tests/test_correlate.py::test_statistic_and_counts_match_reference",
    "tests/test_data.py::TestReadDataset::test_round_trip_wide",
    "tests/test_data_properties.py::test_only_documented_exceptions",
    "tests/test_data_properties.py::test_random_long_frames",
    "tests/test_data_properties.py::test_random_rater_frames",
    "tests/test_data_properties.py::test_valid_frames_match_reference",
    "tests/test_io_hostile.py::test_reader_agrees_with_a_slow_reference_tokenizer",
    "tests/test_judge.py::test_a_run_killed_half_way_resumes_without_repeating_a_request",
    "tests/test_judge.py::test_a_short_api_key_echoed_in_an_error_is_redacted_as_a_token",
    "tests/test_judge.py::test_concurrency_does_not_change_the_answers",
    "tests/test_judge.py::test_credentials_in_base_url_are_sent_as_basic_auth_and_never_shown",
    "tests/test_judge.py::test_judge_command_pairwise",
    "tests/test_judge.py::test_judge_command_timeout_is_a_deadline",
    "tests/test_judge.py::test_judge_follows_redirects_to_other_hosts",
    "tests/test_judge.py::test_local_backend_errors",
    "tests/test_judge.py::test_local_generation_matches_transformers_generate",
    "tests/test_judge.py::test_local_judge_uses_the_past_key_values_keyword_that_transformers_deprecates",
    "tests/test_judge.py::test_local_rating_decoding_uses_exact_scale_probabilities",
    "tests/test_judge.py::test_response_size_is_capped",
    "tests/test_judge.py::test_retry_only_429_5xx_and_network_errors_and_honour_retry_after",
    "tests/test_judge.py::test_the_api_key_is_sent_but_never_stored_shown_or_logged",
    "tests/test_judge.py::test_timeout_is_a_deadline_not_a_per_read_limit",
    "tests/test_levels.py::test_batches_and_broadcast_human_scores",
    "tests/test_levels.py::test_every_level_and_method_matches_the_reference",
    "tests/test_levels.py::test_input_order_does_not_matter_for_integer_scores",
    "tests/test_levels.py::test_matches_reference_on_larger_likert_tables_with_missing_cells",
    "tests/test_levels.py::test_metric_and_human_play_symmetric_roles_without_calibration",
    "tests/test_levels.py::test_nlpstats_live",
    "tests/test_levels.py::test_rank_statistics_are_invariant_under_monotone_transforms",
    "tests/test_levels.py::test_transposition_swaps_item_and_input",
    "tests/test_local.py::test_wtau_kernel_twins",
    "tests/test_measures.py::test_dp_equals_compare_for_every_measure_and_test",
    "tests/test_measures.py::test_dp_frames_and_ranks",
    "tests/test_measures.py::test_dp_on_dask_equals_local",
    "tests/test_measures.py::test_dp_pvalues_match_slow_reference",
    "tests/test_measures.py::test_dp_seed_determinism_across_workers_and_checkpoint",
    "tests/test_measures.py::test_dp_system_level_equals_compare_with_discrete_metrics",
    "tests/test_measures.py::test_rc_determinism_and_checkpoint",
    "tests/test_measures.py::test_rc_matches_slow_reference",
    "tests/test_package.py::test_compare_stays_the_function_after_its_module_is_imported",
    "tests/test_parallel.py::test_workers_exit_when_parent_is_killed",
    "tests/test_permboth.py::test_group_stats_numba_equals_numpy_twin",
    "tests/test_permboth.py::test_perm_both_values_equal_generic_path",
    "tests/test_preferences.py::test_bootstrap_ci_coverage_of_acc_23",
    "tests/test_preferences.py::test_compare_judges_permutation_level_under_the_null",
    "tests/test_preferences.py::test_length_bias_against_statsmodels_and_separation",
    "tests/test_preferences.py::test_logistic_fit_against_statsmodels",
    "tests/test_preferences.py::test_position_consistency_ci_coverage",
    "tests/test_preferences_cli.py::test_preferences_bundled_summeval_and_errors",
    "tests/test_preferences_cli.py::test_preferences_bundled_with_pairwise_judge_outputs",
    "tests/test_ranking.py::test_dlhard_per_query_values_equal_ir_measures",
    "tests/test_ranking.py::test_lastfm_per_query_values_equal_ir_measures",
    "tests/test_ranking.py::test_real_data_facts",
    "tests/test_ranking.py::test_relevance_threshold_applies_to_binary_measures_only",
    "tests/test_ranking.py::test_rerun_and_repeated_perturbation_reuse_cached_scores",
    "tests/test_readonly_install.py::test_read_only_install_without_writable_home_runs",
    "tests/test_simulation.py::test_draw_scores_reproduce_the_simulated_values",
    "tests/test_simulation.py::test_fast_measures_equal_generic",
    "tests/test_simulation.py::test_grid_point_does_not_depend_on_the_rest_of_the_grid",
    "tests/test_simulation.py::test_simulate_engines_agree_exactly",
    "tests/test_simulation.py::test_system_rank_correlations_nearly_flat_in_scale_size",
    "tests/test_startup.py::test_kernels_compiled_once_whatever_the_layout_regression_15_3",
    "tests/test_startup.py::test_public_names_resolve_lazily",
    "tests/test_textmetrics.py::test_bartscore_agrees_with_the_original_scoring_loop",
    "tests/test_textmetrics.py::test_bertscore_agrees_with_bert_score",
    "tests/test_textmetrics.py::test_corpus_scores_match_sacrebleu_corpus_score",
    "tests/test_textmetrics.py::test_gptscore_agrees_with_a_plain_forward_pass",
    "tests/test_textmetrics.py::test_import_does_not_load_torch_or_metric_libraries",
    "tests/test_textmetrics.py::test_meteor_agrees_with_nltk",
    "tests/test_validity.py::test_import_is_light",
    "tests/test_validity.py::test_polychorics_and_nacov_match_lavaan",
    "tests/test_wmt.py::test_aggregation_equals_mtme_tasksetresults",
    "tests/test_wmt.py::test_compare_spa_slow_reference_and_api",
    "tests/test_wmt.py::test_run_tasks_matches_compare_all_and_correlate",
    "tests/test_wmt.py::test_run_wmt_and_cli",
})


def _key(item: pytest.Item) -> str:
    path, _, rest = item.nodeid.partition("::")
    return f"{path}::{rest.split('[', 1)[0]}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen, files = set(), set()
    for item in items:
        key = _key(item)
        files.add(key.partition("::")[0])
        if key in SLOW or item.nodeid.partition("::")[0] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
            seen.add(key)
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        # a module skipped whole (a missing optional package) yields no items: not stale
        stale = sorted(k for k in SLOW - seen if k.partition("::")[0] in files)
        if stale:
            raise pytest.UsageError("tests/conftest.py SLOW names tests that do not exist "
                                    f"(renamed or removed?): {', '.join(stale)}")
