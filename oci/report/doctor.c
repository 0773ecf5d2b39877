/* doctor: the report `hako doctor` prints, as a plain struct and its JSON. */
#include "oci/report/doctor.h"

#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

struct doctor_item *
doctor_add_item (struct doctor_report *r, const char *key, const char *label, bool available, char *detail)
{
  r->items = xrealloc (r->items, (r->n_items + 1) * sizeof *r->items);
  struct doctor_item *it = &r->items[r->n_items++];
  *it = (struct doctor_item){ .key = key, .label = label, .available = available, .detail = detail };
  return it;
}

static struct doctor_field *
add_field (struct doctor_item *it, const char *key, enum doctor_type type)
{
  it->fields = xrealloc (it->fields, (it->n_fields + 1) * sizeof *it->fields);
  struct doctor_field *f = &it->fields[it->n_fields++];
  *f = (struct doctor_field){ .key = key, .type = type };
  return f;
}

void
doctor_field_int (struct doctor_item *it, const char *key, int64_t v)
{
  add_field (it, key, DOCTOR_INT)->i = v;
}

void
doctor_field_bool (struct doctor_item *it, const char *key, bool v)
{
  add_field (it, key, DOCTOR_BOOL)->b = v;
}

void
doctor_field_str (struct doctor_item *it, const char *key, const char *v)
{
  if (v == NULL)
    add_field (it, key, DOCTOR_NULL);
  else
    add_field (it, key, DOCTOR_STR)->s = xstrdup (v);
}

void
doctor_field_strv (struct doctor_item *it, const char *key, char *const *v)
{
  static char *const empty[] = { NULL };
  add_field (it, key, DOCTOR_STRV)->v = strv_dup (v ? v : empty);
}

void
doctor_field_null (struct doctor_item *it, const char *key)
{
  add_field (it, key, DOCTOR_NULL);
}

void
doctor_add_network (struct doctor_profile *p, const char *mode, bool works, char *why)
{
  p->networks = xrealloc (p->networks, (p->n_networks + 1) * sizeof *p->networks);
  p->networks[p->n_networks++] = (struct doctor_network){ .mode = mode, .works = works, .why = why };
}

const struct doctor_item *
doctor_find (const struct doctor_report *r, const char *key)
{
  for (size_t i = 0; i < r->n_items; i++)
    if (strcmp (r->items[i].key, key) == 0)
      return &r->items[i];
  return NULL;
}

static void
gen_field (struct json_out *o, const struct doctor_field *f)
{
  json_key (o, f->key);
  switch (f->type)
    {
    case DOCTOR_INT: json_int (o, f->i); break;
    case DOCTOR_BOOL: json_bool (o, f->b); break;
    case DOCTOR_STR: json_str (o, f->s); break;
    case DOCTOR_STRV: json_strv (o, f->v); break;
    case DOCTOR_NULL:
    default:
      if (o->status == yajl_gen_status_ok)
        o->status = yajl_gen_null (o->g);
      break;
    }
}

int
doctor_report_json (const struct doctor_report *r, char **out, hk_err *err)
{
  static char *const none[] = { NULL };
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  json_kstr (&o, "version", HAKO_VERSION);
  json_kstr (&o, "kernel", r->kernel);
  json_kuint (&o, "euid", r->euid);
  json_key (&o, "checks");
  json_obj_open (&o);
  for (size_t i = 0; i < r->n_items; i++)
    {
      const struct doctor_item *it = &r->items[i];
      json_key (&o, it->key);
      json_obj_open (&o);
      json_kbool (&o, "available", it->available);
      json_kstr (&o, "detail", it->detail ? it->detail : "");
      for (size_t j = 0; j < it->n_fields; j++)
        gen_field (&o, &it->fields[j]);
      json_obj_close (&o);
    }
  json_obj_close (&o);
  json_key (&o, "profiles");
  json_obj_open (&o);
  for (size_t i = 0; i < r->n_profiles; i++)
    {
      const struct doctor_profile *p = &r->profiles[i];
      json_key (&o, p->name);
      json_obj_open (&o);
      json_kbool (&o, "works", p->works);
      json_kstrv (&o, "missing", p->missing ? p->missing : none);
      json_kstrv (&o, "notes", p->notes ? p->notes : none);
      json_key (&o, "networks");
      json_obj_open (&o);
      for (size_t j = 0; j < p->n_networks; j++)
        {
          json_key (&o, p->networks[j].mode);
          json_obj_open (&o);
          json_kbool (&o, "works", p->networks[j].works);
          json_kstr (&o, "why", p->networks[j].why ? p->networks[j].why : "");
          json_obj_close (&o);
        }
      json_obj_close (&o);
      json_obj_close (&o);
    }
  json_obj_close (&o);
  json_obj_close (&o);
  return json_out_finish (&o, out, NULL, err);
}

void
doctor_report_free (struct doctor_report *r)
{
  for (size_t i = 0; i < r->n_items; i++)
    {
      struct doctor_item *it = &r->items[i];
      for (size_t j = 0; j < it->n_fields; j++)
        {
          free (it->fields[j].s);
          strv_free (it->fields[j].v);
        }
      free (it->fields);
      free (it->detail);
    }
  for (size_t i = 0; i < r->n_profiles; i++)
    {
      strv_free (r->profiles[i].missing);
      strv_free (r->profiles[i].notes);
      for (size_t j = 0; j < r->profiles[i].n_networks; j++)
        free (r->profiles[i].networks[j].why);
      free (r->profiles[i].networks);
    }
  free (r->items);
  free (r->profiles);
  free (r->kernel);
  *r = (struct doctor_report){ 0 };
}
